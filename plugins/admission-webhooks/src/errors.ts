// What a client sees when a webhook refuses, fails or cannot be asked: Kubernetes Status objects worded as
// kube-apiserver words them.
import { ApiError, API_ERRORS, errors, type ApiErrorCode, type Status } from '@skiff/api';
import type { ReviewStatus } from './review.js';

function codeFor(status: number): ApiErrorCode {
  const entry = (Object.entries(API_ERRORS) as [ApiErrorCode, { code: number }][]).find(([, e]) => e.code === status);
  return entry?.[0] ?? (status >= 500 ? 'SKIFF_ERR_API_INTERNAL' : 'SKIFF_ERR_API_BAD_REQUEST');
}

/**
 * A webhook said no: the Status it sent, with its message prefixed by `admission webhook "<name>" denied the
 * request`, a code of at least 400 (400 when it gave none) and its reason kept as it was.
 */
export class WebhookDenied extends ApiError {
  private readonly sent: ReviewStatus;

  constructor(webhook: string, sent: ReviewStatus | undefined) {
    const status = sent ?? {};
    const code = typeof status.code === 'number' && status.code >= 400 && status.code <= 599 ? status.code : 400;
    const deniedBy = `admission webhook "${webhook}" denied the request`;
    const message = status.message ? `${deniedBy}: ${status.message}` : status.reason ? `${deniedBy}: ${status.reason}` : `${deniedBy} without explanation`;
    super(codeFor(code), message);
    this.sent = status;
    (this as { status: number }).status = code;
    (this as { reason: string }).reason = typeof status.reason === 'string' ? status.reason : '';
  }

  override toStatus(): Status {
    const details = this.sent.details && typeof this.sent.details === 'object' ? { details: this.sent.details as Status['details'] } : {};
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      ...(this.reason ? { reason: this.reason } : {}),
      ...details,
      code: this.status,
    };
  }
}

/** A webhook with failurePolicy Fail could not be asked (or answered nonsense): 500, as upstream. */
export const callingFailed = (webhook: string, why: string) => errors.internal(`failed calling webhook "${webhook}": ${why}`);

/** A dry-run request meets a webhook that may have side effects: refused, whatever its failurePolicy. */
export const dryRunUnsupported = (webhook: string) => errors.badRequest(`admission webhook "${webhook}" does not support dry run`);
