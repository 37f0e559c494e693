import { codedError } from '@skiff/kernel';

/** Every service-allocator error: a stable code and a message template. */
export const SERVICE_ALLOCATOR_ERRORS = Object.freeze({
  SKIFF_ERR_SERVICE_ALLOCATOR_OPTION: 'option "{option}": {detail}',
} as const);

export type ServiceAllocatorErrorCode = keyof typeof SERVICE_ALLOCATOR_ERRORS;

export class ServiceAllocatorError extends codedError('ServiceAllocatorError', SERVICE_ALLOCATOR_ERRORS) {}
