import http from 'node:http';
import https from 'node:https';
import { errorMessage } from '@skiff/api';
import type { WatchEvent } from '@skiff/kernel';
import { ClientError } from '../errors.js';
import { watchEventsFromLines } from './ndjson.js';
import { isSuccess, statusError } from './status-error.js';
import { isWatchRequest, type Transport, type TransportRequest, type TransportResponse } from './types.js';

export interface HttpsTransportOptions {
  /** https://host:port, optionally with a path prefix. http:// is accepted for local development. */
  server: string;
  /** PEM bundle of the CAs that sign the server certificate; the system CAs otherwise. */
  caPem?: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Client certificate and key (PEM) for x509 authentication. */
  certPem?: string;
  keyPem?: string;
  insecureSkipTlsVerify?: boolean;
}

/** Talks to an API server over the network: JSON bodies, chunked NDJSON watches, pooled keep-alive connections. */
export class HttpsTransport implements Transport {
  private readonly base: URL;
  private agent: http.Agent;
  private readonly send: typeof http.request;

  constructor(private readonly options: HttpsTransportOptions) {
    this.base = parseServerUrl(options.server);
    if (this.base.protocol === 'https:') {
      this.agent = this.tlsAgent(options.certPem, options.keyPem);
      this.send = https.request;
    } else {
      this.agent = new http.Agent({ keepAlive: true });
      this.send = http.request;
    }
  }

  async request(request: TransportRequest): Promise<TransportResponse> {
    const response = await this.exchange(request);
    const status = response.statusCode ?? 0;
    if (!isSuccess(status)) throw statusError(parseBody(await readAll(response), response.headers['content-type']), status);
    if (isWatchRequest(request)) return { status, stream: endQuietlyOnAbort(watchEventsFromLines(response, request.path), request.signal) };
    return { status, body: parseBody(await readAll(response), response.headers['content-type']) };
  }

  close(): void {
    this.agent.destroy();
  }

  /**
   * Takes a new client certificate (a rotated one): every open connection is closed, as upstream's kubelet does after
   * a rotation, so requests and watches (informers watch again) continue over connections made with the new one.
   */
  setClientCertificate(certPem: string, keyPem: string): void {
    if (this.base.protocol !== 'https:') return;
    const previous = this.agent;
    this.agent = this.tlsAgent(certPem, keyPem);
    previous.destroy();
  }

  private tlsAgent(certPem: string | undefined, keyPem: string | undefined): https.Agent {
    return new https.Agent({ keepAlive: true, ca: this.options.caPem, cert: certPem, key: keyPem, rejectUnauthorized: !this.options.insecureSkipTlsVerify });
  }

  private exchange(request: TransportRequest, mayRetry = true): Promise<http.IncomingMessage> {
    const url = new URL(this.base.href);
    url.pathname = this.base.pathname.replace(/\/+$/, '') + request.path;
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
      outgoing.on('error', (err: NodeJS.ErrnoException) => {
        // A pooled connection the server closed while it sat idle (its keep-alive timeout) fails on first
        // reuse, before the server read anything; one retry on a fresh connection is what Node recommends.
        if (mayRetry && outgoing.reusedSocket && err.code === 'ECONNRESET') resolve(this.exchange(request, false));
        else reject(err);
      });
      outgoing.end(payload);
    });
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
