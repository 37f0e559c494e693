import { ApiError, errorMessage, errors, wireCauses, type Status, type StatusCause } from '@skiff/api';
import { isPluginFailure, type ApiResponse, type Logger, type PluginFailure } from '@skiff/kernel';
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
 * class, so a plugin bundling its own copy of @skiff/api or @skiff/kernel is still understood. A plugin that
 * failed (the error itself, or the cause of the Status made from it) is logged with its stack, naming the
 * plugin, its tap and the hook.
 */
export function errorResponse(err: unknown, logger: Logger, context: { method: string; path: string }): ErrorResponse {
  if (err instanceof ApiError || isApiErrorLike(err)) {
    const failures = pluginFailuresIn(err.cause);
    for (const failure of failures) logPluginFailure(failure, logger, context);
    return { response: withRetryAfter(json(err.toStatus(), err.status), err.details?.retryAfterSeconds), unexpected: failures.length > 0 && err.status >= 500 };
  }
  if (isAdmissionError(err)) return { response: json(admissionStatus(err), err.status), unexpected: false };
  if (isPluginFailure(err)) logPluginFailure(err, logger, context);
  else logger.error({ err, method: context.method, path: context.path }, 'request failed');
  const internal = errors.internal(errorMessage(err));
  return { response: json(internal.toStatus(), internal.status), unexpected: true };
}

/** Hands the failures of plugins an ApiError was made from to errorResponse, which logs them. */
export function withPluginFailures<E extends Error>(err: E, failures: readonly PluginFailure[] | undefined): E {
  if (failures?.length) err.cause = failures.length === 1 ? failures[0] : new AggregateError(failures);
  return err;
}

function pluginFailuresIn(cause: unknown): PluginFailure[] {
  if (isPluginFailure(cause)) return [cause];
  if (cause instanceof AggregateError) return cause.errors.filter(isPluginFailure);
  return [];
}

function logPluginFailure(failure: PluginFailure, logger: Logger, context: { method: string; path: string }): void {
  logger.error(
    { err: failure.cause, plugin: failure.pluginName, tap: failure.tapName, hook: failure.hookName, method: context.method, path: context.path },
    failure.message,
  );
}

/** Kubernetes sends a Retry-After header with every error Status that says when to try again (429, 504). */
function withRetryAfter(response: ApiResponse, seconds: number | undefined): ApiResponse {
  if (seconds === undefined) return response;
  return { ...{}, ...response, headers: { ...{}, ...response.headers, 'retry-after': String(seconds) } };
}

function admissionStatus(err: AdmissionErrorLike): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: err.message,
    reason: ADMISSION_REASONS[err.status] ?? 'Forbidden',
    ...(err.causes?.length ? { details: { causes: wireCauses(err.causes) } } : {}),
    code: err.status,
  };
}

function isApiErrorLike(err: unknown): err is ApiError {
  return typeof err === 'object' && err !== null && 'name' in err && err.name === 'ApiError' && 'toStatus' in err && typeof err.toStatus === 'function';
}

function isAdmissionError(err: unknown): err is AdmissionErrorLike {
  return typeof err === 'object' && err !== null && 'name' in err && err.name === 'AdmissionError' && 'status' in err && typeof err.status === 'number';
}
