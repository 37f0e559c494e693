import http from 'node:http';
import https from 'node:https';
import { errorMessage } from '@skiff/api';
import type { WatchEvent } from '@skiff/kernel';
import { certificateFailure } from '../dial-errors.js';
import { ClientError } from '../errors.js';
import { watchEventsFromLines } from './ndjson.js';
import { isSuccess, statusError } from './status-error.js';
import { isWatchRequest, type Transport, type TransportRequest, type TransportResponse } from './types.js';

export interface HttpsTransportOptions {
  /** https://host:port, optionally with a path prefix. http:// is accepted for local development. */
  server: string;
  /**
   * Several API servers of one cluster (signed by the same CA), used instead of `server` when not empty. Requests go
   * to the current one; a connection failure moves to the next (see `HttpsTransport`).
   */
  servers?: readonly string[];
  /** How long making a connection (TCP and TLS handshake) may take before it counts as failed. Default 10 s. */
  connectTimeoutMs?: number;
  /** PEM bundle of the CAs that sign the server certificate; the system CAs otherwise. */
  caPem?: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Client certificate and key (PEM) for x509 authentication. */
  certPem?: string;
  keyPem?: string;
  insecureSkipTlsVerify?: boolean;
}

const CONNECT_TIMEOUT_DEFAULT_MS = 10_000;

/** How far one try of a request got: an error while dialing is a connection failure, whatever its code. */
interface Attempt {
  /** A new connection was being made (TCP, then the TLS handshake). */
  dialing: boolean;
  /** The connection was up, so bytes of the request may have reached the server: resending a write is unsafe. */
  connected: boolean;
}

/**
 * Talks to an API server over the network: JSON bodies, chunked NDJSON watches, pooled keep-alive connections.
 *
 * With several `servers`, it fails over: a connection failure (refused, reset, unreachable, a connect timeout, a failed
 * TLS handshake; never an HTTP answer, which is the server speaking) makes the next server the current one, and the
 * request is sent again there when that is safe: always for reads and watches, for writes only when no byte of them
 * was sent. Every server is tried at most once per request. A watch broken mid-stream ends with its error and the
 * next server becomes current, so the informer that watches again (or relists) does so there.
 */
export class HttpsTransport implements Transport {
  private readonly bases: readonly URL[];
  private current = 0;
  private agent: http.Agent;
  private readonly send: typeof http.request;
  private readonly secure: boolean;

  constructor(private readonly options: HttpsTransportOptions) {
    const servers = options.servers?.length ? options.servers : [options.server];
    this.bases = servers.map(parseServerUrl);
    this.secure = this.bases[0]!.protocol === 'https:';
    if (this.bases.some((base) => (base.protocol === 'https:') !== this.secure)) {
      throw new ClientError('SKIFF_ERR_CLIENT_SERVER_URL', {
        server: servers.join(', '),
        detail: 'the servers of one cluster must all be https:// or all http://',
      });
    }
    if (this.secure) {
      this.agent = this.tlsAgent(options.certPem, options.keyPem);
      this.send = https.request;
    } else {
      this.agent = new http.Agent({ keepAlive: true });
      this.send = http.request;
    }
  }

  /** The server requests go to now. */
  get server(): string {
    return this.bases[this.current]!.href;
  }

  async request(request: TransportRequest): Promise<TransportResponse> {
    const resendable = request.method === 'GET' || request.method === 'HEAD' || isWatchRequest(request);
    for (let tried = 1; ; tried++) {
      const index = this.current;
      const attempt: Attempt = { dialing: false, connected: false };
      let response: http.IncomingMessage;
      let raw: Buffer | undefined;
      try {
        response = await this.exchange(this.bases[index]!, request, attempt);
        if (!isWatchRequest(request) || !isSuccess(response.statusCode ?? 0)) raw = await readAll(response);
      } catch (err) {
        if (request.signal?.aborted || !(isConnectionFailure(err) || (attempt.dialing && !attempt.connected))) throw err;
        this.failedOver(index);
        if (tried >= this.bases.length || !(resendable || !attempt.connected)) throw err;
        continue;
      }
      const status = response.statusCode ?? 0;
      if (!isSuccess(status)) throw statusError(parseBody(raw!, response.headers['content-type']), status);
      if (raw === undefined) {
        const events = failOverOnBreak(watchEventsFromLines(response, request.path), request.signal, () => this.failedOver(index));
        return { status, stream: endQuietlyOnAbort(events, request.signal) };
      }
      return { status, body: parseBody(raw, response.headers['content-type']) };
    }
  }

  close(): void {
    this.agent.destroy();
  }

  /**
   * Takes a new client certificate (a rotated one): every open connection is closed, as upstream's kubelet does after
   * a rotation, so requests and watches (informers watch again) continue over connections made with the new one.
   */
  setClientCertificate(certPem: string, keyPem: string): void {
    if (!this.secure) return;
    const previous = this.agent;
    this.agent = this.tlsAgent(certPem, keyPem);
    previous.destroy();
  }

  private tlsAgent(certPem: string | undefined, keyPem: string | undefined): https.Agent {
    return new https.Agent({ keepAlive: true, ca: this.options.caPem, cert: certPem, key: keyPem, rejectUnauthorized: !this.options.insecureSkipTlsVerify });
  }

  /** The server at `index` failed: the next one becomes current, unless another request moved on already. */
  private failedOver(index: number): void {
    if (this.current === index) this.current = (index + 1) % this.bases.length;
  }

  private exchange(base: URL, request: TransportRequest, attempt: Attempt, mayRetry = true): Promise<http.IncomingMessage> {
    const url = new URL(base.href);
    url.pathname = base.pathname.replace(/\/+$/, '') + request.path;
    for (const [key, value] of Object.entries(request.query)) if (value !== undefined) url.searchParams.set(key, value);

    const headers: Record<string, string> = { accept: 'application/json' };
    for (const [key, value] of Object.entries(request.headers)) if (value !== undefined) headers[key] = value;
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    const payload = encodeBody(request.body);
    if (payload !== undefined) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }

    return new Promise((resolve, reject) => {
      const outgoing = this.send(url, { method: request.method, headers, agent: this.agent, signal: request.signal }, resolve);
      outgoing.on('socket', (socket) => {
        if (outgoing.reusedSocket) {
          attempt.connected = true;
          return;
        }
        attempt.dialing = true;
        const timeoutMs = this.options.connectTimeoutMs ?? CONNECT_TIMEOUT_DEFAULT_MS;
        const timer = setTimeout(() => outgoing.destroy(connectTimeout(url.host, timeoutMs)), timeoutMs);
        const connected = () => {
          clearTimeout(timer);
          attempt.connected = true;
        };
        // Request bytes are held back until the TLS handshake is done, so until then nothing was sent.
        socket.once(this.secure ? 'secureConnect' : 'connect', connected);
        socket.once('close', () => clearTimeout(timer));
      });
      outgoing.on('error', (err: NodeJS.ErrnoException) => {
        // A pooled connection the server closed while it sat idle (its keep-alive timeout) fails on first
        // reuse, before the server read anything; one retry on a fresh connection is what Node recommends.
        if (mayRetry && outgoing.reusedSocket && err.code === 'ECONNRESET') resolve(this.exchange(base, request, attempt, false));
        else reject(err);
      });
      outgoing.end(payload);
    });
  }
}

/** Error codes of a connection that could not be made or broke: the server is not answering, another may. */
const CONNECTION_FAILURES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPROTO',
]);

function isConnectionFailure(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string') return false;
  return CONNECTION_FAILURES.has(code) || code.startsWith('ERR_SSL_') || certificateFailure(err) !== undefined;
}

function connectTimeout(host: string, timeoutMs: number): NodeJS.ErrnoException {
  return Object.assign(new Error(`connecting to ${host} timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' });
}

/** A watch whose connection broke ends with that error, and the server it ran on stops being the current one. */
async function* failOverOnBreak(events: AsyncIterable<WatchEvent>, signal: AbortSignal | undefined, failedOver: () => void): AsyncGenerator<WatchEvent> {
  try {
    yield* events;
  } catch (err) {
    if (!signal?.aborted && isConnectionFailure(err)) failedOver();
    throw err;
  }
}

function parseServerUrl(server: string): URL {
  let url: URL;
  try {
    url = new URL(server);
  } catch (err) {
    throw new ClientError('SKIFF_ERR_CLIENT_SERVER_URL', { server, detail: errorMessage(err) }, { cause: err });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ClientError('SKIFF_ERR_CLIENT_SERVER_URL', { server, detail: 'expected an https:// or http:// URL' });
  }
  return url;
}

function encodeBody(body: unknown): string | Buffer | undefined {
  if (body === undefined) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  return JSON.stringify(body);
}

async function readAll(response: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  // Without an encoding set, a response yields Buffers.
  for await (const chunk of response) if (Buffer.isBuffer(chunk)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  if (raw.length === 0) return undefined;
  const text = raw.toString('utf8');
  if (!contentType?.includes('json')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Aborting a request destroys its socket, which surfaces as a read error; for a watch that is a normal end. */
async function* endQuietlyOnAbort(events: AsyncIterable<WatchEvent>, signal: AbortSignal | undefined): AsyncGenerator<WatchEvent> {
  try {
    yield* events;
  } catch (err) {
    if (!signal?.aborted) throw err;
  }
}
