import { codedError } from '@skiff/kernel';

/** Every DefaultPreemption error: a stable code and a message template (field errors read as upstream's). */
export const DEFAULT_PREEMPTION_ERRORS = Object.freeze({
  SKIFF_ERR_DEFAULT_PREEMPTION_ARGS: 'invalid DefaultPreemptionArgs: {detail}',
} as const);

export type DefaultPreemptionErrorCode = keyof typeof DEFAULT_PREEMPTION_ERRORS;

export class DefaultPreemptionError extends codedError('DefaultPreemptionError', DEFAULT_PREEMPTION_ERRORS) {}
