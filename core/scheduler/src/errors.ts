import { codedError } from '@skiff/kernel';

/** Every scheduler error: a stable code and a message template. */
export const SCHEDULER_ERRORS = Object.freeze({
  SKIFF_ERR_SCHEDULER_PLUGIN_DUPLICATE: 'scheduler plugin "{name}" is registered twice',
  SKIFF_ERR_SCHEDULER_PLUGIN_INVALID: 'scheduler plugin "{name}" is invalid: {detail}',
  SKIFF_ERR_SCHEDULER_PROFILE_UNKNOWN_PLUGIN: 'scheduler profile names {point} plugin "{name}", which is not registered (known: {known})',
  SKIFF_ERR_SCHEDULER_PROFILE_NOT_CAPABLE: 'scheduler profile names "{name}" as a {point} plugin, but it has no {method}() method',
  SKIFF_ERR_SCHEDULER_THREAD: 'the scheduler cannot run in a worker thread: {reason} (set thread: auto or main)',
  SKIFF_ERR_SCHEDULER_PROFILE_DUPLICATE: 'scheduler profiles name schedulerName "{name}" twice',
  SKIFF_ERR_SCHEDULER_PROFILE_ARGS: 'scheduler profile "{profile}" gives args to plugin "{name}": {detail}',
  SKIFF_ERR_SCHEDULER_PROFILE_QUEUE_SORT: 'scheduler profiles must share one queueSort plugin, but "{profile}" uses {got} and "{first}" uses {want}',
} as const);

export type SchedulerErrorCode = keyof typeof SCHEDULER_ERRORS;

export class SchedulerError extends codedError('SchedulerError', SCHEDULER_ERRORS) {}
