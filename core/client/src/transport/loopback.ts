import { cloneJsonValue } from '@skiff/api';
import type { ApiHandler } from '@skiff/kernel';
import { isSuccess, statusError } from './status-error.js';
import type { Transport, TransportRequest, TransportResponse } from './types.js';

/**
 * Calls the API server's handler in-process. The request still runs the whole pipeline
 * (authentication with the loopback token, authorization, admission); only the socket is skipped.
 */
export class LoopbackTransport implements Transport {
  constructor(
    private readonly handler: ApiHandler,
    private readonly token: string,
  ) {}

  async request(request: TransportRequest): Promise<TransportResponse> {
    const response = await this.handler.handle({
      method: request.method,
      path: request.path,
      query: request.query,
      headers: { ...{}, ...request.headers, authorization: `Bearer ${this.token}` },
      body: ownedCopy(request.body),
      signal: request.signal,
    });
    if (!isSuccess(response.status)) throw statusError(response.body, response.status);
    if (response.stream) return { status: response.status, stream: response.stream };
    return { status: response.status, body: ownedCopy(response.body) };
  }
}

/**
 * Over HTTPS the caller's object and the server's object are never the same; the loopback keeps that
 * promise by copying, so admission mutating a request body or a caller editing a response (get → edit →
 * update) cannot reach into the other side's memory. Watch streams are not copied: their objects are
 * shared and read-only by contract.
 */
function ownedCopy(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Buffer.isBuffer(body)) return body;
  return cloneJsonValue(body);
}
