import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorMessage } from '@skiff/api';

/** A request the kubelet answers with an HTTP error: upstream's kubelet answers these as plain text. */
export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpFailure';
  }
}

/**
 * The status and text a failure is answered with: an HttpFailure's own; an error that says which Status it is
 * (`toStatus()`, as the node connection's coded errors do) with that Status's code and message; else a 500.
 */
export function failureOf(err: unknown): { status: number; text: string } {
  if (err instanceof HttpFailure) return { status: err.status, text: err.message };
  if (typeof err === 'object' && err !== null && 'toStatus' in err && typeof err.toStatus === 'function') {
    const status = err.toStatus() as { code?: unknown; message?: unknown };
    if (typeof status.code === 'number') return { status: status.code, text: typeof status.message === 'string' ? status.message : errorMessage(err) };
  }
  return { status: 500, text: errorMessage(err) };
}

const TEXT = 'text/plain; charset=utf-8';

export function answerText(response: ServerResponse, status: number, text: string, contentType = TEXT): void {
  const body = Buffer.from(text);
  response.writeHead(status, { 'content-type': contentType, 'content-length': body.length, 'x-content-type-options': 'nosniff' }).end(body);
}

export function answerJson(response: ServerResponse, status: number, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value));
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
}

/** An answer written straight onto a connection that left Node's HTTP parser (an upgrade request), which then closes. */
export function answerRaw(socket: Duplex, status: number, text: string, contentType = TEXT): void {
  if (socket.destroyed) return;
  const body = Buffer.from(text);
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}`,
    `Content-Type: ${contentType}`,
    `Content-Length: ${body.length}`,
    'Connection: close',
  ].join('\r\n');
  socket.end(Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), body]));
}
