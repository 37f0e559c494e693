import { ApiError, isJsonObject } from '@skiff/api';

/** Rebuilds the `ApiError` a server answered with; non-Status bodies (a proxy's HTML page) keep their text. */
export function statusError(body: unknown, httpStatus: number): ApiError {
  if (isJsonObject(body) && !Buffer.isBuffer(body)) return ApiError.fromStatus(body, httpStatus);
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : typeof body === 'string' ? body : '';
  return ApiError.fromStatus({ message: text.trim() || `HTTP ${httpStatus}` }, httpStatus);
}

export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}
