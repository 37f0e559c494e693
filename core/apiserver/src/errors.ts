import { codedError } from '@skiff/kernel';

/**
 * Errors of the API server itself (not of API requests: those leave as Kubernetes `Status` objects through
 * `ApiError` from @skiff/api). Stable codes, message templates with `{placeholders}`.
 */
export const APISERVER_ERRORS = Object.freeze({
  SKIFF_ERR_APISERVER_NOT_STARTED: 'the API server is not started: {detail}',
  SKIFF_ERR_APISERVER_PKI: 'cannot prepare the API server certificates in {dir}: {detail}',
  SKIFF_ERR_APISERVER_NO_CA: 'no cluster CA in {dir} (ca.crt and ca.key): start the cluster there once (skiff up), or name its data dir',
  SKIFF_ERR_APISERVER_LISTEN: 'cannot listen on {address}: {detail}',
  SKIFF_ERR_APISERVER_INITIALIZER_DUPLICATE: 'initializer "{name}" is registered twice for {resource}',
  SKIFF_ERR_APISERVER_RESOURCE_INVALID: 'resource definition {resource} is invalid: {detail}',
  SKIFF_ERR_APISERVER_WORKERS: 'cannot serve the API on several threads (apiServer.workers): {detail}',
} as const);

export type ApiServerErrorCode = keyof typeof APISERVER_ERRORS;

export class ApiServerError extends codedError('ApiServerError', APISERVER_ERRORS) {}
