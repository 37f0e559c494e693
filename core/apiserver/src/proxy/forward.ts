import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { posix } from 'node:path';
import { Readable, type Duplex } from 'node:stream';
import { deflateRawSync, gunzipSync, gzipSync, inflateRawSync } from 'node:zlib';
import { errorMessage, errors, type UserInfo } from '@skiff/api';
import { certificateFailure, splice } from '@skiff/client';
import type { ApiRequest, ApiResponse } from '@skiff/kernel';
import { dialUpgrade } from '../streaming/backend.js';
import { backendError, refusalError, writeRawStatus } from '../streaming/raw-response.js';
import { headerList, isUpgradeRequest } from '../streaming/headers.js';
import { rewriteHtml } from './html.js';

/** Headers that belong to one hop (RFC 9110 §7.6.1), never forwarded either way. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
/** The front-proxy identity headers (requestheader authentication) an aggregated API server reads. */
const REMOTE_USER = 'x-remote-user';
const REMOTE_GROUP = 'x-remote-group';
const REMOTE_EXTRA_PREFIX = 'x-remote-extra-';

export interface BackendTls {
  /** PEM CA bundle the backend's certificate must chain to; without it, and without `insecure`, the system roots. */
  ca?: string;
  /** Skip verifying the backend's certificate (pods/proxy and services/proxy do, as kube-apiserver's proxy transport does). */
  insecure: boolean;
  /** A client certificate to present (the aggregator's front-proxy certificate). */
  cert?: string;
  key?: string;
  /** The name the certificate must carry (`<service>.<namespace>.svc` for aggregated APIs). */
  servername?: string;
}

export interface ForwardOptions {
  request: ApiRequest;
  scheme: 'http' | 'https';
  host: string;
  /** Empty for the scheme's default port. */
  port: string;
  /** The path on the backend, as escaped in the request; empty for none. */
  path: string;
  /**
   * What the request's path has in front of `path` (`/api/v1/namespaces/x/pods/y/proxy`): redirects the backend
   * answers with are rewritten under it, and it heads X-Forwarded-Uri. Undefined: Location is passed as it is.
   */
  pathPrepend?: string;
  tls?: BackendTls;
  /** Sent as X-Remote-User, X-Remote-Group and X-Remote-Extra-* (any the client sent are dropped). */
  identity?: UserInfo;
  /** Aborts the backend request when it fires (the client went away). */
  signal?: AbortSignal;
  /**
   * Aggregated APIs: the request names the backend in its Host header, and a redirect from the backend is
   * answered 502 instead of being followed by the client (kube-apiserver's --aggregator-reject-forwarding-redirect).
   */
  aggregated?: boolean;
}

/** The query string of a request as it arrived (repeated parameters kept when the transport knows them). */
export function rawQuery(request: ApiRequest): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query)) {
    const all = request.queryAll?.[name];
    if (all) for (const each of all) params.append(name, each);
    else if (value !== undefined) params.append(name, value);
  }
  return params.toString();
}

/**
 * Forwards one HTTP request to a backend and streams its answer back, as kube-apiserver's proxy handler does:
 * hop-by-hop headers and the client's credentials (Authorization, Impersonate-*) stay behind, X-Forwarded-For
 * and X-Forwarded-Uri are added, the body streams both ways, a redirect's Location and the links of an HTML page
 * are rewritten to stay under the proxy path, the backend's CORS headers are dropped. A backend that cannot be reached is a 503.
 * An upgrade request (WebSocket, SPDY) is relayed as an upgrade.
 */
export async function forward(options: ForwardOptions): Promise<ApiResponse> {
  const { request } = options;
  const query = rawQuery(request);
  const path = `${options.path || '/'}${query ? `?${query}` : ''}`;
  const headers = outgoingHeaders(options);
  if (isUpgradeRequest(request.headers)) return { status: 101, upgrade: relayUpgrade(options, path, headers) };
  const send = options.scheme === 'https' ? httpsRequest : httpRequest;
  const backend = send({
    host: options.host,
    port: options.port || (options.scheme === 'https' ? 443 : 80),
    method: request.method,
    path,
    headers,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.scheme === 'https' ? tlsOptions(options.tls) : {}),
  });
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    backend.once('response', resolve);
    backend.once('error', reject);
  });
  writeBody(request.body, backend);
  let response: IncomingMessage;
  try {
    response = await answered;
  } catch (err) {
    throw errors.unavailable(`error trying to reach service: ${dialFailure(err)}`);
  }
  // A body stream that fails later (the backend went away mid-answer) just ends the response.
  backend.on('error', () => undefined);
  const out = responseHeaders(response, options, request);
  const status = response.statusCode ?? 502;
  if (options.aggregated && status >= 300 && status <= 399 && out.location) {
    response.resume();
    return {
      status: 502,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'the backend attempted to redirect this request, which is not permitted',
    };
  }
  if (request.method === 'HEAD') {
    response.resume();
    return { status, headers: out, body: '' };
  }
  const encoding = (out['content-encoding'] ?? '').trim().toLowerCase();
  const html = (out['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() === 'text/html';
  // As kube-apiserver: the links of an HTML page (one it can decode) are kept under the proxy path too.
  if (options.pathPrepend !== undefined && html && !out.location && (encoding === '' || encoding === 'gzip' || encoding === 'deflate')) {
    const pathPrepend = options.pathPrepend;
    let page: string;
    try {
      page = decoded(await readAll(response), encoding).toString('latin1');
    } catch (err) {
      throw errors.unavailable(`error trying to reach service: ${errorMessage(err)}`);
    }
    const rewritten = rewriteHtml(page, (url) => rewriteLocation(url, pathPrepend, backendHostOf(options), request.headers.host ?? ''));
    delete out['content-length'];
    return { status, headers: out, body: encoded(Buffer.from(rewritten, 'latin1'), encoding) };
  }
  return { status, headers: out, textStream: bodyOf(response) };
}

function backendHostOf(options: ForwardOptions): string {
  return `${options.host.includes(':') ? `[${options.host}]` : options.host}${options.port ? `:${options.port}` : ''}`;
}

async function readAll(response: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Go's "deflate" is raw DEFLATE (compress/flate), not zlib. */
function decoded(body: Buffer, encoding: string): Buffer {
  if (encoding === 'gzip') return gunzipSync(body);
  if (encoding === 'deflate') return inflateRawSync(body);
  return body;
}

function encoded(body: Buffer, encoding: string): Buffer {
  if (encoding === 'gzip') return gzipSync(body);
  if (encoding === 'deflate') return deflateRawSync(body);
  return body;
}

function outgoingHeaders(options: ForwardOptions): OutgoingHttpHeaders {
  const { request, identity } = options;
  const dropped = new Set(headerList(request.headers.connection).map((name) => name.toLowerCase()));
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || dropped.has(name)) continue;
    // The API server authenticated the client: its credentials are not the backend's business.
    if (name === 'authorization' || name.startsWith('impersonate-')) continue;
    if (identity && (name === REMOTE_USER || name === REMOTE_GROUP || name.startsWith(REMOTE_EXTRA_PREFIX))) continue;
    headers[name] = value;
  }
  if (isUpgradeRequest(request.headers)) headers.upgrade = request.headers.upgrade;
  if (options.aggregated) headers.host = backendHostOf(options);
  const client = request.remoteAddress;
  if (client) headers['x-forwarded-for'] = request.headers['x-forwarded-for'] ? `${request.headers['x-forwarded-for']}, ${client}` : client;
  if (options.pathPrepend !== undefined) {
    const joined = posix.join(options.pathPrepend, options.path || '/');
    headers['x-forwarded-uri'] = options.path.endsWith('/') && !joined.endsWith('/') ? `${joined}/` : joined;
  }
  if (identity) {
    headers[REMOTE_USER] = identity.username;
    if (identity.groups.length) headers[REMOTE_GROUP] = identity.groups;
    for (const [key, values] of Object.entries(identity.extra ?? {})) headers[`${REMOTE_EXTRA_PREFIX}${encodeURIComponent(key)}`] = values;
  }
  return headers;
}

/** Why the backend could not be reached; a certificate that fails verification in kube-apiserver's words. */
function dialFailure(err: unknown): string {
  return certificateFailure(err) ?? errorMessage(err);
}

function tlsOptions(tls: BackendTls | undefined) {
  if (!tls) return { rejectUnauthorized: false };
  return {
    rejectUnauthorized: !tls.insecure,
    ...(tls.ca && !tls.insecure ? { ca: tls.ca } : {}),
    ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}),
    ...(tls.servername ? { servername: tls.servername } : {}),
  };
}

function writeBody(body: unknown, backend: NodeJS.WritableStream & { end(chunk?: unknown): unknown }): void {
  if (body instanceof Readable) {
    body.pipe(backend);
    return;
  }
  if (body === undefined || body === null) backend.end();
  else if (Buffer.isBuffer(body) || typeof body === 'string') backend.end(body);
  else backend.end(JSON.stringify(body));
}

function responseHeaders(response: IncomingMessage, options: ForwardOptions, request: ApiRequest): Record<string, string> {
  const dropped = new Set(headerList(response.headers.connection).map((name) => name.toLowerCase()));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || dropped.has(name) || name.startsWith('access-control-')) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  if (out.location && options.pathPrepend !== undefined) {
    out.location = rewriteLocation(out.location, options.pathPrepend, backendHostOf(options), request.headers.host ?? '');
  }
  return out;
}

/**
 * A backend's redirect, kept under the proxy path as kube-apiserver's proxy transport keeps it: a URL on another
 * host or a relative path stays as it is; one on the backend loses its scheme and host (the API server's own
 * host is kept); an absolute path not already under `pathPrepend` is moved under it.
 */
export function rewriteLocation(location: string, pathPrepend: string, backendHost: string, apiHost: string): string {
  const match = /^(?:([a-zA-Z][a-zA-Z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(.*)$/s.exec(location);
  if (!match) return location;
  const [, givenScheme, givenHost, givenPath = '', rest = ''] = match;
  if ((givenHost && givenHost !== backendHost && givenHost !== apiHost) || !givenPath.startsWith('/')) return location;
  const keepHost = givenHost !== undefined && givenHost === apiHost;
  const scheme = keepHost ? givenScheme : undefined;
  const host = keepHost ? givenHost : undefined;
  let path = givenPath;
  if (!path.startsWith(pathPrepend)) {
    const joined = posix.join(pathPrepend, path);
    path = path.endsWith('/') && !joined.endsWith('/') ? `${joined}/` : joined;
  }
  return `${scheme ? `${scheme}:` : ''}${host !== undefined ? `//${host}` : ''}${path}${rest}`;
}

async function* bodyOf(response: IncomingMessage): AsyncIterable<Uint8Array> {
  try {
    for await (const chunk of response) yield chunk as Buffer;
  } catch {
    // The backend broke off: what was sent stands, the response ends.
  } finally {
    response.destroy();
  }
}

/**
 * An upgrade through the proxy: the request goes to the backend with its upgrade headers; its 101 is relayed
 * and the two connections spliced, any refusal answered as a Status.
 */
function relayUpgrade(options: ForwardOptions, path: string, headers: OutgoingHttpHeaders) {
  const url = `${options.scheme}://${options.host.includes(':') ? `[${options.host}]` : options.host}${options.port ? `:${options.port}` : ''}${path}`;
  const lines: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (name === 'upgrade' || name === 'host' || name === 'content-length' || value === undefined) continue;
    for (const each of Array.isArray(value) ? value : [String(value)]) lines.push([name, each]);
  }
  const upgrade = String(headers.upgrade ?? '');
  const method = options.request.method === 'POST' ? 'POST' : 'GET';
  return (client: Duplex, head: Buffer) => {
    const closed = new AbortController();
    client.once('close', () => closed.abort());
    void (async () => {
      let answer;
      try {
        answer = await dialUpgrade(url, { method, upgrade, headers: lines, tls: tlsOptions(options.tls) }, closed.signal);
      } catch (err) {
        writeRawStatus(client, backendError(dialFailure(err)));
        return;
      }
      if (!answer.upgraded) return writeRawStatus(client, refusalError(answer));
      if (client.destroyed) return answer.socket.destroy();
      client.write(answer.rawHead);
      if (answer.rest.length) client.write(answer.rest);
      if (head.length) answer.socket.write(head);
      answer.socket.resume();
      splice(client, answer.socket);
    })();
  };
}
