export const PLUGIN_NAME = '@skiff/plugin-scheduler-balanced-allocation';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same score). */
export const NODE_RESOURCES_BALANCED_ALLOCATION = 'NodeResourcesBalancedAllocation';
