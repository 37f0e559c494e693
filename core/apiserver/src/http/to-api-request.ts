import type { FastifyRequest } from 'fastify';
import type { ApiRequest } from '@skiff/kernel';
import { peerCertificates } from './peer-certificates.js';

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** Builds the transport-independent request from fastify's; `signal` (made when first read) aborts when the client goes away. */
export function toApiRequest(request: FastifyRequest, signal: () => AbortSignal): ApiRequest {
  const url = request.raw.url ?? '/';
  const question = url.indexOf('?');
  return {
    method: (METHODS.has(request.method) ? request.method : 'GET') as ApiRequest['method'],
    path: question < 0 ? url : url.slice(0, question),
    query: flatten(request.query as Record<string, string | string[] | undefined>, false),
    headers: flatten(request.headers, true),
    body: request.body,
    remoteAddress: request.socket.remoteAddress,
    peerCertificates: peerCertificates(request.socket),
    get signal() {
      return signal();
    },
  };
}

/** Repeated headers are joined (RFC 9110); a repeated query parameter keeps its first value. */
function flatten(values: Record<string, string | string[] | undefined> | undefined, join: boolean): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  if (!values) return out;
  for (const key in values) {
    const value = values[key];
    out[key] = Array.isArray(value) ? (join ? value.join(', ') : value[0]) : value;
  }
  return out;
}
