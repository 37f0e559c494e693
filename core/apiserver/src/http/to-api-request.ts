import type { FastifyRequest } from 'fastify';
import { isJsonObject } from '@skiff/api';
import type { ApiRequest } from '@skiff/kernel';
import { peerCertificates } from './peer-certificates.js';

const METHODS: readonly ApiRequest['method'][] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The request's method, or GET for one the API does not serve (the router has refused those already). */
export function apiMethodOf(method: string): ApiRequest['method'] {
  return METHODS.find((known) => known === method) ?? 'GET';
}

/**
 * Builds the transport-independent request from fastify's; `signal` (made when first read) aborts when the client
 * goes away. A request to a proxy route keeps HEAD and OPTIONS as they are (elsewhere HEAD is a GET) and every
 * value of repeated query parameters: it is forwarded.
 */
export function toApiRequest(request: FastifyRequest, signal: () => AbortSignal, proxied = false): ApiRequest {
  const url = request.raw.url ?? '/';
  const question = url.indexOf('?');
  return {
    ...{},
    ...(proxied ? { queryAll: queryAllOf(question < 0 ? '' : url.slice(question + 1)) } : {}),
    method: proxied && (request.method === 'HEAD' || request.method === 'OPTIONS') ? request.method : apiMethodOf(request.method),
    path: question < 0 ? url : url.slice(0, question),
    query: queryOf(request.query),
    headers: flatten(request.headers),
    body: request.body,
    remoteAddress: request.socket.remoteAddress,
    peerCertificates: peerCertificates(request.socket),
    get signal() {
      return signal();
    },
  };
}

/** Repeated headers are joined (RFC 9110). */
function flatten(values: Record<string, string | string[] | undefined> | undefined): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  if (!values) return out;
  for (const key in values) {
    const value = values[key];
    out[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** The parsed query string (fastify types it unknown): a repeated parameter keeps its first value. */
function queryOf(query: unknown): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  if (!isJsonObject(query)) return out;
  for (const key in query) {
    const value = query[key];
    const first: unknown = Array.isArray(value) ? value[0] : value;
    out[key] = typeof first === 'string' ? first : undefined;
  }
  return out;
}

function queryAllOf(search: string): Record<string, string[]> {
  const all: Record<string, string[]> = {};
  for (const [name, value] of new URLSearchParams(search)) (all[name] ??= []).push(value);
  return all;
}
