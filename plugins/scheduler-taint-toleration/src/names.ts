export const PLUGIN_NAME = '@skiff/plugin-scheduler-taint-toleration';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same filter and score). */
export const TAINT_TOLERATION = 'TaintToleration';

/** Upstream's default weight of the TaintToleration score. */
export const TAINT_TOLERATION_WEIGHT = 3;

/** kube-scheduler's reason for a taint the pod does not tolerate, word for word: `node(s) had untolerated taint {dedicated: gpu}`. */
export function untoleratedTaintReason(taint: { key: string; value?: string }): string {
  return `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`;
}
