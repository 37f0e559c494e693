import { codedError } from '@skiff/kernel';

/** Every EndpointSlice-controller error: a stable code and a message template. */
export const ENDPOINTSLICE_ERRORS = Object.freeze({
  SKIFF_ERR_ENDPOINTSLICE_NODE_NOT_FOUND: 'skipping pods {pods} for Service {service}: their node is not known yet',
} as const);

export type EndpointSliceErrorCode = keyof typeof ENDPOINTSLICE_ERRORS;

export class EndpointSliceError extends codedError('EndpointSliceError', ENDPOINTSLICE_ERRORS) {}
