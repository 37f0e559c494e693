import { codedError } from '@skiff/kernel';

/** Every node IPAM error: a stable code and a message template. */
export const NODE_IPAM_ERRORS = Object.freeze({
  SKIFF_ERR_NODE_IPAM_OPTIONS: 'option {option}: {detail}',
} as const);

export type NodeIpamErrorCode = keyof typeof NODE_IPAM_ERRORS;

export class NodeIpamError extends codedError('NodeIpamError', NODE_IPAM_ERRORS) {}
