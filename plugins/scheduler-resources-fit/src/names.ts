export const PLUGIN_NAME = '@skiff/plugin-scheduler-resources-fit';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same filter and score). */
export const NODE_RESOURCES_FIT = 'NodeResourcesFit';

/** The score strategies of NodeResourcesFitArgs.scoringStrategy.type. */
export const LEAST_ALLOCATED = 'LeastAllocated';
export const MOST_ALLOCATED = 'MostAllocated';
export const REQUESTED_TO_CAPACITY_RATIO = 'RequestedToCapacityRatio';

/** The highest score a RequestedToCapacityRatio shape point may give (upstream's MaxCustomPriorityScore). */
export const MAX_CUSTOM_PRIORITY_SCORE = 10;
