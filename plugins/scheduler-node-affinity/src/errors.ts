import { codedError } from '@skiff/kernel';

/** Every NodeAffinity error: a stable code and a message template. */
export const NODE_AFFINITY_ERRORS = Object.freeze({
  SKIFF_ERR_NODE_AFFINITY_ARGS: 'invalid NodeAffinityArgs: {detail}',
} as const);

export type NodeAffinityErrorCode = keyof typeof NODE_AFFINITY_ERRORS;

export class NodeAffinityError extends codedError('NodeAffinityError', NODE_AFFINITY_ERRORS) {}
