import { codedError } from '@skiff/kernel';

/** Every DefaultBinder error: a stable code and a message template. */
export const DEFAULT_BINDER_ERRORS = Object.freeze({
  SKIFF_ERR_DEFAULT_BINDER_NO_CLIENT: 'binding pod {pod} to {node}: the plugin was not initialised with a client (init was not called)',
} as const);

export type DefaultBinderErrorCode = keyof typeof DEFAULT_BINDER_ERRORS;

export class DefaultBinderError extends codedError('DefaultBinderError', DEFAULT_BINDER_ERRORS) {}
