import { ApiError, errors, type Status, type StatusCause } from '@skiff/api';
import type { ApiResponse, Logger } from '@skiff/kernel';
import { json } from '../rest/respond.js';

const ADMISSION_REASONS: Record<number, string> = {
  400: 'BadRequest',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  422: 'Invalid',
  429: 'TooManyRequests',
};

interface AdmissionErrorLike {
  name: 'AdmissionError';
  message: string;
  status: number;
  causes?: StatusCause[];
}

export interface ErrorResponse {
  response: ApiResponse;
  /** The server failed (not the client): logged, audited as Panic. */
  unexpected: boolean;
}

/**
 * Every failure leaves as a Kubernetes Status: ApiErrors as they are, admission rejections with their code,
 * and anything else as a 500 whose details stay in the log. Errors are recognised by shape as well as by
 * class, so a plugin bundling its own copy of @skiff/api or @skiff/kernel is still understood.
 */
export function errorResponse(err: unknown, logger: Logger, context: { method: string; path: string }): ErrorResponse {
  if (err instanceof ApiError || isApiErrorLike(err)) return { response: withRetryAfter(json(err.toStatus(), err.status), err.details?.retryAfterSeconds), unexpected: false };
  if (isAdmissionError(err)) return { response: json(admissionStatus(err), err.status), unexpected: false };
  logger.error({ err, method: context.method, path: context.path }, 'request failed');
  const internal = errors.internal((err as Error)?.message ?? String(err));
  return { response: json(internal.toStatus(), internal.status), unexpected: true };
}

/** Kubernetes sends a Retry-After header with every error Status that says when to try again (429, 504). */
function withRetryAfter(response: ApiResponse, seconds: number | undefined): ApiResponse {
  if (seconds === undefined) return response;
  return { ...response, headers: { ...response.headers, 'retry-after': String(seconds) } };
}

function admissionStatus(err: AdmissionErrorLike): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: err.message,
    reason: ADMISSION_REASONS[err.status] ?? 'Forbidden',
    ...(err.causes?.length ? { details: { causes: err.causes } } : {}),
    code: err.status,
  };
}

function isApiErrorLike(err: unknown): err is ApiError {
  return typeof err === 'object' && err !== null && (err as Error).name === 'ApiError' && typeof (err as ApiError).toStatus === 'function';
}

function isAdmissionError(err: unknown): err is AdmissionErrorLike {
  return typeof err === 'object' && err !== null && (err as Error).name === 'AdmissionError' && typeof (err as AdmissionErrorLike).status === 'number';
}
