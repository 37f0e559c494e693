export const PLUGIN_NAME = '@skiff/plugin-scheduler-default-preemption';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same PostFilter). */
export const DEFAULT_PREEMPTION = 'DefaultPreemption';

/** The pod condition preemption sets on a victim before deleting it, and its reason. */
export const DISRUPTION_TARGET = 'DisruptionTarget';
export const PREEMPTION_BY_SCHEDULER = 'PreemptionByScheduler';

/** Kubernetes' words, which users grep FailedScheduling messages and events for. */
export const NOT_ELIGIBLE_NEVER = 'not eligible due to preemptionPolicy=Never.';
export const NOT_ELIGIBLE_TERMINATING = 'not eligible due to a terminating pod on the nominated node.';
export const NOT_HELPFUL = 'Preemption is not helpful for scheduling';
export const NO_VICTIMS = 'No preemption victims found for incoming pod';
export const NO_CANDIDATE = 'no candidate node for preemption';
