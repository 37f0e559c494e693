import { codedError } from '@skiff/kernel';

/** Every error of the cluster DNS server: a stable code and a message template. */
export const DNS_ERRORS = Object.freeze({
  SKIFF_ERR_DNS_LISTEN: 'cluster DNS cannot listen on {address} port {port} (UDP and TCP): {detail}',
  SKIFF_ERR_DNS_PUBLISH: 'cluster DNS cannot publish itself as Service {namespace}/{name}: {detail}',
} as const);

export type DnsErrorCode = keyof typeof DNS_ERRORS;

export class DnsError extends codedError('DnsError', DNS_ERRORS) {}
