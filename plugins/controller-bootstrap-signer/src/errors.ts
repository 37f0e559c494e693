import { codedError } from '@skiff/kernel';

/** Every error of the bootstrap signer package: a stable code and a message template. */
export const BOOTSTRAP_SIGNER_ERRORS = Object.freeze({
  SKIFF_ERR_BOOTSTRAP_TOKEN_OPTIONS: 'cannot create a bootstrap token: {detail}',
  SKIFF_ERR_BOOTSTRAP_SIGNER_RBAC: 'cannot create {kind} {name} for joining nodes: {detail}',
} as const);

export type BootstrapSignerErrorCode = keyof typeof BOOTSTRAP_SIGNER_ERRORS;

export class BootstrapSignerError extends codedError('BootstrapSignerError', BOOTSTRAP_SIGNER_ERRORS) {}
