export const PLUGIN_NAME = '@skiff/plugin-scheduler-priority-sort';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same queue sort). */
export const PRIORITY_SORT = 'PrioritySort';
