import type { Status } from '@skiff/api';
import type { ApiResponse } from '@skiff/kernel';

const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json' });

export function json(body: unknown, status = 200, warnings?: string[]): ApiResponse {
  if (!warnings || warnings.length === 0) return { status, headers: JSON_HEADERS, body };
  return { status, headers: { ...{}, ...JSON_HEADERS, warning: warningHeaders(warnings) }, body };
}

/**
 * The Warning header of a response: each distinct message once, as kube-apiserver's recorder keeps them (an update
 * retried after a conflict runs admission again, and its taps add their warnings again).
 */
export function warningHeaders(warnings: readonly string[]): string {
  return [...new Set(warnings)].map(warningHeader).join(', ');
}

/** RFC 7234 warning values as Kubernetes sends them: `299 - "unknown field \"spec.x\""`. */
export function warningHeader(message: string): string {
  return `299 - ${JSON.stringify(message)}`;
}

export function successStatus(details?: Status['details']): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', ...(details ? { details } : {}), code: 200 };
}
