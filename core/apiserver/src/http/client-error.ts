import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { statusBody } from './status-body.js';

const CLOSE_GRACE_MS = 5_000;

export interface ClientErrorContext {
  /** The largest request line plus headers Node's parser accepts. */
  maxHeaderBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Whether a response is being written on the socket: a second one would corrupt it. */
  responding(socket: Socket): boolean;
}

/** What a request that Node's HTTP parser refused gets: its status code and the message of the Status. */
function answerFor(error: Error & { code?: string }, context: ClientErrorContext): { code: number; message: string } | undefined {
  const code = error.code ?? '';
  if (code === 'HPE_HEADER_OVERFLOW')
    return { code: 431, message: `the request line (URL) and headers are larger than the limit of ${context.maxHeaderBytes} bytes` };
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return { code: 413, message: 'the chunk extensions of the request body are too large' };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return {
      code: 408,
      message: `the request did not arrive in time: headers are allowed ${context.headersTimeoutMs} ms, the whole request ${context.requestTimeoutMs} ms`,
    };
  if (code.startsWith('HPE_')) return { code: 400, message: `the request is not valid HTTP/1.1: ${error.message}` };
  // TLS failures, resets and timeouts of the handshake: there is no HTTP exchange to answer.
  return undefined;
}

/**
 * Node's `clientError`: a request its HTTP parser refused (a URL or headers over the limit, bytes that are not
 * HTTP, a request that took too long to arrive) is answered with a Kubernetes `Status`, as every other error,
 * and the connection closes. Failed TLS handshakes and resets just close.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket, context: ClientErrorContext): void {
  const answer = answerFor(error, context);
  if (!answer || !socket.writable || context.responding(socket)) {
    socket.destroy();
    return;
  }
  const body = statusBody(answer.code, answer.message);
  const head = [
    `HTTP/1.1 ${answer.code} ${STATUS_CODES[answer.code] ?? ''}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ].join('\r\n');
  // A peer that never reads the answer does not keep the socket either.
  socket.setTimeout(CLOSE_GRACE_MS, () => socket.destroy());
  socket.end(`${head}\r\n\r\n${body}`, () => socket.destroy());
}
