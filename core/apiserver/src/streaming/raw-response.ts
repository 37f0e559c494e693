import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, errorMessage, errors, type Status } from '@skiff/api';
import { drained } from '@skiff/client';
import type { ApiResponse } from '@skiff/kernel';

/**
 * Writes an HTTP/1.1 response straight onto a socket that left Node's HTTP parser (an upgrade request that
 * is not upgraded after all), then closes it: `Connection: close` delimits the body. Streams (a watch sent
 * with upgrade headers) are written as they come, until they end or the socket closes.
 */
export async function writeRawResponse(socket: Duplex, response: ApiResponse): Promise<void> {
  if (socket.destroyed) return;
  const headers: Record<string, string> = { ...{}, ...response.headers, connection: 'close' };
  const stream = rawChunks(response);
  if (stream) {
    socket.write(responseHead(response.status, { 'cache-control': 'no-cache, private', ...headers }));
    try {
      for await (const chunk of stream) {
        if (socket.destroyed) break;
        if (!socket.write(chunk)) await drained(socket);
      }
    } finally {
      socket.end();
    }
    return;
  }
  const body = response.body;
  const payload = body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  headers['content-length'] = String(payload.length);
  socket.end(Buffer.concat([Buffer.from(responseHead(response.status, headers), 'latin1'), payload]));
}

/** Answers an upgrade request with a Kubernetes Status, for failures after the pipeline handed the socket over. */
export function writeRawStatus(socket: Duplex, err: ApiError | Status): void {
  const status = err instanceof ApiError ? err.toStatus() : err;
  void writeRawResponse(socket, { status: status.code ?? 500, headers: { 'content-type': 'application/json' }, body: status });
}

/** The Status for a runtime that refused to upgrade: its HTTP status and what it said. */
export function refusalError(refusal: { status: number; message: string }): ApiError {
  const status = refusal.status >= 400 && refusal.status < 600 ? refusal.status : 500;
  return ApiError.fromStatus({ message: `unable to upgrade connection: ${refusal.message}` }, status);
}

/** A Status for a failure reaching or talking to the container runtime (kube-apiserver: "error dialing backend"). */
export function backendError(err: unknown): ApiError {
  return errors.internal(`error dialing backend: ${errorMessage(err)}`);
}

function responseHead(status: number, headers: Record<string, string>): string {
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

function rawChunks(response: ApiResponse): AsyncIterable<string | Uint8Array> | undefined {
  if (response.textStream) return response.textStream;
  const events = response.stream;
  if (!events) return undefined;
  return (async function* () {
    for await (const event of events) yield `${JSON.stringify(event)}\n`;
  })();
}
