import { codedError } from '@skiff/kernel';

/** Every NodeResourcesFit error: a stable code and a message template (field errors read as upstream's). */
export const RESOURCES_FIT_ERRORS = Object.freeze({
  SKIFF_ERR_NODE_RESOURCES_FIT_ARGS: 'invalid NodeResourcesFitArgs: {detail}',
} as const);

export type ResourcesFitErrorCode = keyof typeof RESOURCES_FIT_ERRORS;

export class ResourcesFitError extends codedError('ResourcesFitError', RESOURCES_FIT_ERRORS) {}
