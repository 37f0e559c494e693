export const PLUGIN_NAME = '@skiff/plugin-scheduler-least-allocated';

/** The scheduler framework plugin this package registers (Kubernetes' historical name for this score). */
export const NODE_RESOURCES_LEAST_ALLOCATED = 'NodeResourcesLeastAllocated';
