import type { IncomingMessage } from 'node:http';
import type { ApiRequest } from '@skiff/kernel';
import { peerCertificates } from '../http/peer-certificates.js';
import { apiMethodOf } from '../http/to-api-request.js';

/**
 * The transport-independent request for an HTTP request Node handed over as an upgrade (`Connection: Upgrade`):
 * the same fields fastify's requests give the pipeline, plus every value of repeated query parameters. Upgrade
 * requests carry no body. `signal` aborts when the connection closes.
 */
export function upgradeApiRequest(request: IncomingMessage, signal: AbortSignal): ApiRequest {
  const url = request.url ?? '/';
  const question = url.indexOf('?');
  const params = new URLSearchParams(question < 0 ? '' : url.slice(question + 1));
  const query: Record<string, string | undefined> = {};
  const queryAll: Record<string, string[]> = {};
  for (const [name, value] of params) {
    query[name] ??= value;
    (queryAll[name] ??= []).push(value);
  }
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return {
    method: apiMethodOf((request.method ?? 'GET').toUpperCase()),
    path: question < 0 ? url : url.slice(0, question),
    query,
    queryAll,
    headers,
    remoteAddress: request.socket.remoteAddress,
    peerCertificates: peerCertificates(request.socket),
    signal,
  };
}
