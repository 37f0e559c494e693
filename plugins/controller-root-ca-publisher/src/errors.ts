import { codedError } from '@skiff/kernel';

/** Every root-CA-publisher error: a stable code and a message template. */
export const ROOT_CA_PUBLISHER_ERRORS = Object.freeze({
  SKIFF_ERR_ROOT_CA_PUBLISHER_NO_CA: 'no cluster CA certificate to publish: {detail}',
} as const);

export type RootCaPublisherErrorCode = keyof typeof ROOT_CA_PUBLISHER_ERRORS;

export class RootCaPublisherError extends codedError('RootCaPublisherError', ROOT_CA_PUBLISHER_ERRORS) {}
