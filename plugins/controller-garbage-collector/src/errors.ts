import { codedError } from '@skiff/kernel';

/** Every garbage-collector error: a stable code and a message template. */
export const GC_ERRORS = Object.freeze({
  SKIFF_ERR_GC_UNKNOWN_RESOURCE: 'option "resources" names "{name}", which is not a known resource (known: {known})',
} as const);

export type GcErrorCode = keyof typeof GC_ERRORS;

export class GcError extends codedError('GcError', GC_ERRORS) {}
