import { codedError } from '@skiff/kernel';

/** Every certificates-controller error: a stable code and a message template. */
export const CSR_ERRORS = Object.freeze({
  SKIFF_ERR_CSR_NO_CA: 'no cluster CA to sign certificates with: {detail}',
  SKIFF_ERR_CSR_BAD_REQUEST: 'the certificate request cannot be used: {detail}',
} as const);

export type CsrErrorCode = keyof typeof CSR_ERRORS;

export class CsrError extends codedError('CsrError', CSR_ERRORS) {}
