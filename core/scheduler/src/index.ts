import { schedulerPlugin } from './plugin.js';

export default schedulerPlugin;
export { schedulerPlugin, collectSchedulerPlugins } from './plugin.js';
export { Scheduler, createScheduler, type SchedulerOptions } from './scheduler.js';
export { SchedulerMetrics, type AttemptResult, type PendingCounts } from './metrics.js';
export { schedulePod, pickBest, feasibleNodesToFind, type ScheduleResult, type ScheduleSuccess, type ScheduleFailure } from './framework/cycle.js';
export {
  buildProfile,
  buildProfiles,
  EXTENSION_POINT_KEYS,
  type SchedulingProfile,
  type ProfileConfig,
  type PluginSet,
  type ExtensionPointKey,
  type ScorePluginEntry,
} from './framework/profile.js';
export { PluginRegistry } from './framework/registry.js';
export { fitErrorMessage, NO_NODES_MESSAGE } from './framework/fit-error.js';
export {
  createNodeInfo,
  addPodToNodeInfo,
  removePodFromNodeInfo,
  setNodeInfoNode,
  cloneNodeInfo,
  hasPodAffinityTerms,
  hasRequiredAntiAffinity,
} from './framework/node-info.js';
export {
  podRequests,
  amountsFromResourceList,
  addAmounts,
  emptyAmounts,
  DEFAULT_MILLI_CPU_REQUEST,
  DEFAULT_MEMORY_REQUEST,
  type PodRequestOptions,
} from './framework/resources.js';
export { SchedulerCache } from './cache/scheduler-cache.js';
export { SchedulingQueue, type QueuedPod, type QueueEvent, type SchedulingQueueOptions } from './queue/scheduling-queue.js';
export { nodeReady } from './builtin/node-ready.js';
export { podToleratesTaint, type Taint } from './builtin/tolerations.js';
export { schedulerOptionsSchema, type SchedulerPluginOptions } from './options.js';
export { SchedulerError, SCHEDULER_ERRORS, type SchedulerErrorCode } from './errors.js';
export { PLUGIN_NAME, DEFAULT_SCHEDULER_NAME, SCHEDULER_USER, BUILTIN_PLUGINS } from './names.js';
export { MAX_NODE_SCORE, defaultNormalizeScore, cloneCycleState, podPriority, unresolvable, unschedulable } from './framework/plugin-helpers.js';
export { NodeListSnapshot, normalizedImageName } from './cache/snapshot.js';
export { Nominator } from './nominator.js';
