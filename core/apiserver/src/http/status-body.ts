// The reasons of the Status objects the HTTP layer answers by itself, before a request reaches the pipeline.
const REASONS: Record<number, string> = {
  400: 'BadRequest',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  408: 'Timeout',
  413: 'RequestEntityTooLarge',
  414: 'BadRequest',
  415: 'UnsupportedMediaType',
  // Kubernetes has no reason of its own for 431: the client's request was malformed in size.
  431: 'BadRequest',
};

/** A failure `Status` as JSON text, for answers the HTTP layer gives without the pipeline. */
export function statusBody(code: number, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: REASONS[code] ?? 'InternalError', code });
}
