import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { DaemonSetController } from './controller.js';
import { CONTROLLER_NAME, NODE_AFFINITY_FILTER, PLUGIN_NAME } from './names.js';
import { nodeAffinityFilter } from './node-affinity-filter.js';

/** The DaemonSet controller: one pod per eligible node, rolling updates, history and status. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'DaemonSets synced in parallel',
  options: {
    nodeAffinityFilter: {
      type: 'boolean',
      default: true,
      description: 'register the scheduler filter NodeAffinity (nodeSelector and required node affinity) unless a plugin of that name is already registered',
    },
  },
  controllers: () => ({ [CONTROLLER_NAME]: (ctx) => new DaemonSetController(ctx) }),
  apply(kernel, options) {
    if (options.nodeAffinityFilter !== false) {
      kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => {
        if (!registry.get(NODE_AFFINITY_FILTER)) registry.register(nodeAffinityFilter);
      });
    }
  },
});
export default plugin;

export type DaemonSetControllerOptions = PluginOptions<typeof plugin>;

export { DaemonSetController, nodeSchedulingChanged } from './controller.js';
export {
  PLUGIN_NAME,
  CONTROLLER_NAME,
  NODE_AFFINITY_FILTER,
  CONTROLLER_REVISION_HASH_LABEL,
  TEMPLATE_GENERATION_LABEL,
  TEMPLATE_GENERATION_ANNOTATION,
  BURST_REPLICAS,
  EVENT_REASON,
} from './names.js';
export { nodeShouldRunDaemonPod, type NodeVerdict } from './eligibility.js';
export { podFitsNodeAffinity, nodeSelectorMatches, affinityForNode, targetNodeName, type Affinity, type NodeSelector } from './node-affinity.js';
export { DAEMON_POD_TOLERATIONS, HOST_NETWORK_TOLERATION, withDaemonTolerations, toleratesTaint, type Toleration, type Taint } from './tolerations.js';
export { nodeAffinityFilter, NODE_AFFINITY_MISMATCH } from './node-affinity-filter.js';
export { planDaemonPods, podsByNode, type ManagePlan } from './manage.js';
export { planRollingUpdate, rollingLimits, allowsSurge, type RollingStep } from './rolling.js';
export { calculateStatus } from './status.js';
export { podForNode, isPodUpdated, templateGeneration } from './pod-template.js';
export { templateHash } from '@skiff/controller-manager';
export { templatePatch, revisionMatches, revisionsToCleanUp } from './history.js';
export { DaemonSetError, DAEMONSET_ERRORS, type DaemonSetErrorCode } from './errors.js';
