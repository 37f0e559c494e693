import { codedError } from '@skiff/kernel';

/** Every error of the Job and CronJob controllers' plugin: a stable code and a message template. */
export const JOB_ERRORS = Object.freeze({
  SKIFF_ERR_JOB_OPTION: 'option "{option}": {detail}',
} as const);

export type JobErrorCode = keyof typeof JOB_ERRORS;

export class JobError extends codedError('JobError', JOB_ERRORS) {}
