import { codedError } from '@skiff/kernel';

/** Every namespace-controller error: a stable code and a message template. */
export const NAMESPACE_ERRORS = Object.freeze({
  SKIFF_ERR_NAMESPACE_CONTENT_DELETION: 'could not delete all content of namespace "{namespace}": {detail}',
} as const);

export type NamespaceErrorCode = keyof typeof NAMESPACE_ERRORS;

export class NamespaceError extends codedError('NamespaceError', NAMESPACE_ERRORS) {}
