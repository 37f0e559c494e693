import { codedError } from '@skiff/kernel';

/** Every error of the service account token plugin: a stable code and a message template. */
export const SERVICE_ACCOUNT_TOKEN_ERRORS = Object.freeze({
  SKIFF_ERR_SERVICE_ACCOUNT_KEY: 'service account signing key {file}: {detail}',
} as const);

export type ServiceAccountTokenErrorCode = keyof typeof SERVICE_ACCOUNT_TOKEN_ERRORS;

export class ServiceAccountTokenError extends codedError('ServiceAccountTokenError', SERVICE_ACCOUNT_TOKEN_ERRORS) {}
