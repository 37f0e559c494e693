import { codedError } from '@skiff/kernel';

/** Every NodeResourcesBalancedAllocation error: a stable code and a message template (field errors read as upstream's). */
export const BALANCED_ALLOCATION_ERRORS = Object.freeze({
  SKIFF_ERR_BALANCED_ALLOCATION_ARGS: 'invalid NodeResourcesBalancedAllocationArgs: {detail}',
} as const);

export type BalancedAllocationErrorCode = keyof typeof BALANCED_ALLOCATION_ERRORS;

export class BalancedAllocationError extends codedError('BalancedAllocationError', BALANCED_ALLOCATION_ERRORS) {}
