/** The scheduler host plugin's package name, used for every tap it makes. */
export const PLUGIN_NAME = '@skiff/scheduler';

/** Pods whose spec.schedulerName is empty or this are scheduled by a scheduler with default options. */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

/** The identity the scheduler's loopback client authenticates as (Kubernetes' kube-scheduler user). */
export const SCHEDULER_USER = 'system:kube-scheduler';

/** The event source component, as `kubectl describe` shows it ("From default-scheduler"). */
export const SCHEDULER_COMPONENT = 'default-scheduler';

/** Built-in filter plugins the scheduler registers before calling the schedulerPlugins hook. */
export const BUILTIN_PLUGINS = Object.freeze({
  NODE_UNSCHEDULABLE: 'NodeUnschedulable',
  NODE_READY: 'NodeReady',
});
