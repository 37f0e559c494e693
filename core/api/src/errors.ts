import type { Status, StatusCause } from './types.js';

/**
 * Every API error Skiff returns, in one table: a stable code, the HTTP status and the Kubernetes `reason`.
 * API errors always leave the server as a Kubernetes `Status` (see {@link ApiError.toStatus}).
 */
export const API_ERRORS = Object.freeze({
  SKIFF_ERR_API_BAD_REQUEST: { code: 400, reason: 'BadRequest' },
  SKIFF_ERR_API_UNAUTHORIZED: { code: 401, reason: 'Unauthorized' },
  SKIFF_ERR_API_FORBIDDEN: { code: 403, reason: 'Forbidden' },
  SKIFF_ERR_API_NOT_FOUND: { code: 404, reason: 'NotFound' },
  SKIFF_ERR_API_METHOD_NOT_ALLOWED: { code: 405, reason: 'MethodNotAllowed' },
  SKIFF_ERR_API_NOT_ACCEPTABLE: { code: 406, reason: 'NotAcceptable' },
  SKIFF_ERR_API_ALREADY_EXISTS: { code: 409, reason: 'AlreadyExists' },
  SKIFF_ERR_API_CONFLICT: { code: 409, reason: 'Conflict' },
  SKIFF_ERR_API_GONE: { code: 410, reason: 'Expired' },
  SKIFF_ERR_API_REQUEST_ENTITY_TOO_LARGE: { code: 413, reason: 'RequestEntityTooLarge' },
  SKIFF_ERR_API_UNSUPPORTED_MEDIA_TYPE: { code: 415, reason: 'UnsupportedMediaType' },
  SKIFF_ERR_API_INVALID: { code: 422, reason: 'Invalid' },
  SKIFF_ERR_API_TOO_MANY_REQUESTS: { code: 429, reason: 'TooManyRequests' },
  SKIFF_ERR_API_INTERNAL: { code: 500, reason: 'InternalError' },
  /** A failure kube-apiserver reports without a reason (a plain Go error): a 500 carrying only its message. */
  SKIFF_ERR_API_UNKNOWN: { code: 500, reason: '' },
  SKIFF_ERR_API_SERVICE_UNAVAILABLE: { code: 503, reason: 'ServiceUnavailable' },
  SKIFF_ERR_API_TIMEOUT: { code: 504, reason: 'Timeout' },
} as const);

export type ApiErrorCode = keyof typeof API_ERRORS;

export interface ApiErrorDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly reason: string;
  readonly details?: ApiErrorDetails;

  constructor(code: ApiErrorCode, message: string, details?: ApiErrorDetails) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = API_ERRORS[code].code;
    this.reason = API_ERRORS[code].reason;
    this.details = details;
  }

  toStatus(): Status {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      ...(this.reason ? { reason: this.reason } : {}),
      ...(this.details ? { details: this.details.causes ? { ...{}, ...this.details, causes: wireCauses(this.details.causes) } : this.details } : {}),
      code: this.status,
    };
  }

  /** Rebuilds an error from a `Status` a server sent back (used by clients). */
  static fromStatus(status: Partial<Status>, httpStatus?: number): ApiError {
    const code = httpStatus ?? status.code ?? 500;
    const entry =
      (Object.entries(API_ERRORS) as [ApiErrorCode, { code: number; reason: string }][]).find(([, e]) => e.reason === status.reason && e.code === code) ??
      (Object.entries(API_ERRORS) as [ApiErrorCode, { code: number; reason: string }][]).find(([, e]) => e.code === code);
    const details = status.details?.causes
      ? { ...{}, ...status.details, causes: status.details.causes.map((cause) => ({ ...{}, ...cause, type: cause.type ?? cause.reason })) }
      : status.details;
    const err = new ApiError(entry?.[0] ?? 'SKIFF_ERR_API_INTERNAL', status.message ?? `HTTP ${code}`, details);
    return err;
  }
}

/**
 * Causes as the API writes them: Go's StatusCause keeps its `Type` under the JSON (and protobuf) name `reason`,
 * so `{ type, message, field }` goes out as `{ reason, message, field }` (clients such as
 * `apierrors.HasStatusCause` read `reason`).
 */
export function wireCauses(causes: readonly StatusCause[]): StatusCause[] {
  return causes.map(({ type, reason, message, field }) => ({
    ...{},
    ...((reason ?? type) !== undefined ? { reason: reason ?? type } : {}),
    ...(message !== undefined ? { message } : {}),
    ...(field !== undefined ? { field } : {}),
  }));
}

export function isApiError(err: unknown, reason?: string): err is ApiError {
  return err instanceof ApiError && (reason === undefined || err.reason === reason);
}

/** The `<resource>.<group>` form Kubernetes uses in messages ("deployments.apps", "pods"). */
export function qualifiedResource(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

export const errors = {
  badRequest: (message: string, causes?: StatusCause[]) => new ApiError('SKIFF_ERR_API_BAD_REQUEST', message, causes ? { causes } : undefined),
  unauthorized: (message = 'Unauthorized') => new ApiError('SKIFF_ERR_API_UNAUTHORIZED', message),
  forbidden: (message: string, details?: ApiErrorDetails) => new ApiError('SKIFF_ERR_API_FORBIDDEN', message, details),
  notFound: (resource: string, group: string, name: string) =>
    new ApiError('SKIFF_ERR_API_NOT_FOUND', `${qualifiedResource(resource, group)} "${name}" not found`, {
      name,
      ...(group ? { group } : {}),
      kind: resource,
    }),
  pathNotFound: (path: string) => new ApiError('SKIFF_ERR_API_NOT_FOUND', `the server could not find the requested resource (${path})`),
  methodNotAllowed: (message: string) => new ApiError('SKIFF_ERR_API_METHOD_NOT_ALLOWED', message),
  notAcceptable: (message: string) => new ApiError('SKIFF_ERR_API_NOT_ACCEPTABLE', message),
  alreadyExists: (resource: string, group: string, name: string) =>
    new ApiError('SKIFF_ERR_API_ALREADY_EXISTS', `${qualifiedResource(resource, group)} "${name}" already exists`, {
      name,
      ...(group ? { group } : {}),
      kind: resource,
    }),
  conflict: (resource: string, group: string, name: string, why: string) =>
    new ApiError('SKIFF_ERR_API_CONFLICT', `Operation cannot be fulfilled on ${qualifiedResource(resource, group)} "${name}": ${why}`, {
      name,
      ...(group ? { group } : {}),
      kind: resource,
    }),
  gone: (message: string) => new ApiError('SKIFF_ERR_API_GONE', message),
  /** 413, worded as Kubernetes does (`Request entity too large: …`). */
  requestEntityTooLarge: (message: string) => new ApiError('SKIFF_ERR_API_REQUEST_ENTITY_TOO_LARGE', `Request entity too large: ${message}`),
  unsupportedMediaType: (contentType: string, accepted?: readonly string[]) =>
    new ApiError(
      'SKIFF_ERR_API_UNSUPPORTED_MEDIA_TYPE',
      `the body of the request was in an unknown format - accepted media types include: ${(accepted ?? ['application/json', 'application/yaml', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/json-patch+json', 'application/apply-patch+yaml']).join(', ')} (got "${contentType}")`,
    ),
  /** 422 Invalid: `<Kind>.<group> "<name>" is invalid: <field>: <detail>, …` */
  invalid: (kind: string, group: string, name: string, causes: StatusCause[]) =>
    new ApiError(
      'SKIFF_ERR_API_INVALID',
      `${group ? `${kind}.${group}` : kind} "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`,
      { name, ...(group ? { group } : {}), kind, causes },
    ),
  tooManyRequests: (message: string, retryAfterSeconds = 1) => new ApiError('SKIFF_ERR_API_TOO_MANY_REQUESTS', message, { retryAfterSeconds }),
  /** 504 Timeout, worded as Kubernetes does (`Timeout: …`); `retryAfterSeconds` says when to try again. */
  timeout: (message: string, details?: Pick<ApiErrorDetails, 'causes' | 'retryAfterSeconds'>) =>
    new ApiError('SKIFF_ERR_API_TIMEOUT', `Timeout: ${message}`, details),
  internal: (message: string) => new ApiError('SKIFF_ERR_API_INTERNAL', `Internal error occurred: ${message}`),
  /** 500 without a reason, the message as it is: what kube-apiserver answers for errors its handlers did not classify. */
  unknown: (message: string) => new ApiError('SKIFF_ERR_API_UNKNOWN', message),
  unavailable: (message: string) => new ApiError('SKIFF_ERR_API_SERVICE_UNAVAILABLE', message),
};
