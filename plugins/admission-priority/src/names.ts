import { ADMISSION_STAGE } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-admission-priority';

/** After ServiceAccount and PodSecurity, as kube-apiserver orders its plugins; before quota, whose scopes read the class. */
export const PRIORITY_STAGE = ADMISSION_STAGE.SERVICE_ACCOUNT + 250;

/** A pod's priority when it names no class and no class is the global default. */
export const DEFAULT_PRIORITY = 0;

/** What a pod may preempt when its class does not say (and when no class applies). */
export const DEFAULT_PREEMPTION_POLICY = 'PreemptLowerPriority';

/** Class names with this prefix belong to the system (the API server refuses other ones). */
export const SYSTEM_PREFIX = 'system-';

/** The classes every cluster has, created at start when missing; they cannot be deleted, nor their value changed. */
export const SYSTEM_PRIORITY_CLASSES = Object.freeze([
  { name: 'system-node-critical', value: 2_000_001_000, description: 'For pods a node cannot work without: never moved off their node to make room.' },
  { name: 'system-cluster-critical', value: 2_000_000_000, description: 'For pods the cluster cannot work without; they may still be moved to another node.' },
] as const);

export const isSystemPriorityClass = (name: string) => SYSTEM_PRIORITY_CLASSES.some((known) => known.name === name);

/** Where the API server keeps PriorityClasses in the store. */
export const PRIORITY_CLASSES_PREFIX = '/registry/scheduling.k8s.io/priorityclasses/';
