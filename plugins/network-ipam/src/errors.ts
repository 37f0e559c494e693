import { codedError } from '@skiff/kernel';

/** Every IPAM error: a stable code and a message template (the exhaustion text is host-local's). */
export const IPAM_ERRORS = Object.freeze({
  SKIFF_ERR_IPAM_CIDR_INVALID: 'invalid {what} "{value}": {detail}',
  SKIFF_ERR_IPAM_NODE_OUT_OF_RANGE: 'node {index} has no subnet: {clusterCIDR} holds {count} /{maskSize} node subnets',
  SKIFF_ERR_IPAM_EXHAUSTED: 'no IP addresses available in range set: {first}-{last}',
} as const);

export type IpamErrorCode = keyof typeof IPAM_ERRORS;

export class IpamError extends codedError('IpamError', IPAM_ERRORS) {}
