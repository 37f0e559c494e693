export const PLUGIN_NAME = '@skiff/plugin-scheduler-scheduling-gates';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same preEnqueue). */
export const SCHEDULING_GATES = 'SchedulingGates';
