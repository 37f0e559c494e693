import { toleratesTaint, type Node, type PodSpec, type Taint, type Toleration } from '@skiff/api';

const exists = (key: string, effect: string): Toleration => ({ key, operator: 'Exists', effect });

/**
 * The tolerations every DaemonSet pod gets, as upstream's controller adds them: it keeps running on a
 * node that is not ready or unreachable, and is placed on nodes under disk, memory or PID pressure and on
 * cordoned ones.
 */
export const DAEMON_POD_TOLERATIONS: readonly Toleration[] = Object.freeze([
  exists('node.kubernetes.io/not-ready', 'NoExecute'),
  exists('node.kubernetes.io/unreachable', 'NoExecute'),
  exists('node.kubernetes.io/disk-pressure', 'NoSchedule'),
  exists('node.kubernetes.io/memory-pressure', 'NoSchedule'),
  exists('node.kubernetes.io/pid-pressure', 'NoSchedule'),
  exists('node.kubernetes.io/unschedulable', 'NoSchedule'),
]);

/** Added as well for host-network pods, which do not need the pod network to be up. */
export const HOST_NETWORK_TOLERATION: Toleration = Object.freeze(exists('node.kubernetes.io/network-unavailable', 'NoSchedule'));

/** Same key, operator, value and effect: a toleration the defaults replace rather than add beside. */
function sameToleration(a: Toleration, b: Toleration): boolean {
  return (
    (a.key ?? '') === (b.key ?? '') &&
    (a.operator ?? 'Equal') === (b.operator ?? 'Equal') &&
    (a.value ?? '') === (b.value ?? '') &&
    (a.effect ?? '') === (b.effect ?? '')
  );
}

/** The pod's tolerations with the DaemonSet defaults added; a matching one of the pod's own is replaced by the default. */
export function withDaemonTolerations(spec: PodSpec): Toleration[] {
  const tolerations = structuredClone(spec.tolerations ?? []);
  const defaults = spec.hostNetwork ? [...DAEMON_POD_TOLERATIONS, HOST_NETWORK_TOLERATION] : DAEMON_POD_TOLERATIONS;
  for (const toleration of defaults) {
    const index = tolerations.findIndex((existing) => sameToleration(existing, toleration));
    if (index >= 0) tolerations[index] = { ...toleration };
    else tolerations.push({ ...toleration });
  }
  return tolerations;
}

/** The node's taints with one of `effects` that none of the tolerations tolerates. */
export function untoleratedTaints(node: Node, tolerations: readonly Toleration[], effects: readonly string[]): Taint[] {
  return (node.spec?.taints ?? []).filter((taint) => effects.includes(taint.effect) && !tolerations.some((toleration) => toleratesTaint(toleration, taint)));
}
