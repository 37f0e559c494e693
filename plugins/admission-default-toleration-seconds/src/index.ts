import type { Toleration } from '@skiff/api';
import { ADMISSION_STAGE, definePlugin, isAdmissionFor, packageInfo, type PluginOptions } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-admission-default-toleration-seconds';

/** After ServiceAccount and PodSecurity, beside Priority, as kube-apiserver orders its plugins; before quota. */
export const DEFAULT_TOLERATION_SECONDS_STAGE = ADMISSION_STAGE.SERVICE_ACCOUNT + 260;

/** The taints the node lifecycle puts on a node that stops being Ready, or stops reporting at all. */
export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';
export const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';

/** Whether `toleration` already covers the NoExecute taint `key` (an empty key or effect tolerates every one). */
function covers(toleration: Toleration, key: string): boolean {
  return (!toleration.key || toleration.key === key) && (!toleration.effect || toleration.effect === 'NoExecute');
}

/**
 * kube-apiserver's DefaultTolerationSeconds admission: every pod that does not say otherwise tolerates its node
 * being not ready or unreachable for a while (300 seconds by default) before the taint evicts it, so a short
 * outage of a node does not restart all of its pods elsewhere.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    properties: {
      notReadyTolerationSeconds: {
        type: 'integer',
        minimum: 0,
        default: 300,
        description: `tolerationSeconds of the ${NOT_READY_TAINT}:NoExecute toleration added to pods that have none (kube-apiserver's --default-not-ready-toleration-seconds)`,
      },
      unreachableTolerationSeconds: {
        type: 'integer',
        minimum: 0,
        default: 300,
        description: `tolerationSeconds of the ${UNREACHABLE_TAINT}:NoExecute toleration added to pods that have none (kube-apiserver's --default-unreachable-toleration-seconds)`,
      },
    },
  },
  apply(kernel, options) {
    const defaults: readonly [string, number][] = [
      [NOT_READY_TAINT, options.notReadyTolerationSeconds],
      [UNREACHABLE_TAINT, options.unreachableTolerationSeconds],
    ];
    kernel.hooks.mutate.tap({ name: PLUGIN_NAME, stage: DEFAULT_TOLERATION_SECONDS_STAGE }, (request) => {
      // Updates too: a replaced pod that leaves them out gets them back, as the stored pod has them.
      if (!isAdmissionFor(request, 'pods') || (request.operation !== 'CREATE' && request.operation !== 'UPDATE') || !request.object?.spec) return;
      const spec = request.object.spec;
      const tolerations = spec.tolerations ?? [];
      const added = defaults.filter(([key]) => !tolerations.some((toleration) => covers(toleration, key)));
      if (added.length === 0) return;
      spec.tolerations = [
        ...tolerations,
        ...added.map(([key, tolerationSeconds]): Toleration => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds })),
      ];
    });
  },
});
export default plugin;

export type DefaultTolerationSecondsOptions = PluginOptions<typeof plugin>;
