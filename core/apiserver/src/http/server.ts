import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Server as TlsServer } from 'node:tls';
import fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { UserInfo } from '@skiff/api';
import type { ApiHandler, ApiRequest, Logger } from '@skiff/kernel';
import { onAuthenticated } from '../pipeline/authenticate.js';
import { negotiateProtobuf } from '../pipeline/negotiate.js';
import { writeRawResponse } from '../streaming/raw-response.js';
import { upgradeApiRequest } from '../streaming/upgrade-request.js';
import { answerClientError } from './client-error.js';
import { ConnectionGuard } from './connection-guard.js';
import { defaultMaxConnections, openFileLimit } from './open-file-limit.js';
import { sendResponse } from './send-response.js';
import { statusBody } from './status-body.js';
import { toApiRequest } from './to-api-request.js';
import { MAX_OBJECT_BYTES } from '@skiff/api/patch';

/** Limits and timeouts of client connections; the plugin's options of the same names set them. */
export interface ConnectionLimits {
  /** Open client connections at most. Default: derived from the open-file limit (a quarter, at least 512, kept back). */
  maxConnections: number;
  /** A TLS handshake must finish this long after the connection was accepted. */
  tlsHandshakeTimeoutMs: number;
  /** A request's headers must have arrived this long after the connection (or the previous request) began. */
  requestHeadersTimeoutMs: number;
  /** A whole request, body included, must have arrived this long after it began. Responses (watches) are not limited. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long. */
  keepAliveTimeoutMs: number;
  /** The request line (URL) and headers together at most; past it, a 431 Status. */
  maxRequestHeaderBytes: number;
}

export const CONNECTION_LIMIT_DEFAULTS: Readonly<Omit<ConnectionLimits, 'maxConnections'>> = Object.freeze({
  tlsHandshakeTimeoutMs: 10_000,
  requestHeadersTimeoutMs: 30_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 90_000,
  maxRequestHeaderBytes: 16 * 1024,
});

export interface HttpServerOptions {
  handler: ApiHandler;
  logger: Logger;
  tls: { key: string; cert: string; ca: string };
  connections?: Partial<ConnectionLimits>;
}

/** The URLs of the pods, services and nodes proxy subresources, with and without a path after `proxy`. */
const PROXY_ROUTES = ['/api/v1/namespaces/:namespace/:resource/:name/proxy', '/api/v1/:resource/:name/proxy'].flatMap((url) => [url, `${url}/*`]);
const PROXY_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Anonymous requests authenticate too; they do not make a connection one that is kept under pressure. */
const UNAUTHENTICATED_GROUP = 'system:unauthenticated';

/**
 * The HTTPS front of the API server: fastify adapted to ApiRequest/ApiResponse. Bodies reach the pipeline
 * as raw buffers whatever their content type (it decodes JSON, YAML and the patch types, and answers 415
 * for the rest). Clients may present a certificate; the authenticators judge it.
 */
export class HttpServer {
  private readonly app: FastifyInstance;
  /** Connections handed over by upgrades (exec, attach, port-forward): fastify no longer tracks them. */
  private readonly upgraded = new Set<Duplex>();
  private readonly guard: ConnectionGuard;
  /** The limits in force, defaults filled in. */
  readonly limits: ConnectionLimits;

  constructor(private readonly options: HttpServerOptions) {
    const given: ConnectionLimits = {
      ...{},
      ...CONNECTION_LIMIT_DEFAULTS,
      maxConnections: options.connections?.maxConnections ?? defaultMaxConnections(openFileLimit()),
      ...definedOnly(options.connections ?? {}),
    };
    // Node refuses a headers timeout longer than the request timeout: the headers are part of the request.
    const limits = { ...{}, ...given, requestHeadersTimeoutMs: Math.min(given.requestHeadersTimeoutMs, given.requestTimeoutMs) };
    this.limits = limits;
    this.guard = new ConnectionGuard({ maxConnections: limits.maxConnections, handshakeTimeoutMs: limits.tlsHandshakeTimeoutMs, logger: options.logger });
    this.app = fastify({
      https: {
        // Node's timers for the handshake (restarted by every byte; the guard adds a hard deadline) and for
        // requests that do not arrive. They stop at the end of a request, so watches and upgraded streams,
        // however long they last, are never cut by them.
        handshakeTimeout: limits.tlsHandshakeTimeoutMs,
        headersTimeout: limits.requestHeadersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        connectionsCheckingInterval: checkingInterval(limits),
        maxHeaderSize: limits.maxRequestHeaderBytes,
        key: options.tls.key,
        cert: options.tls.cert,
        ca: options.tls.ca,
        requestCert: true,
        rejectUnauthorized: false,
        // TLS 1.2 and up, with forward-secret AEAD suites only: no CBC, no static RSA key exchange. This list
        // names TLS 1.2 suites only, so TLS 1.3 keeps Node's own suites.
        minVersion: 'TLSv1.2',
        ciphers: [
          'ECDHE-ECDSA-AES128-GCM-SHA256',
          'ECDHE-RSA-AES128-GCM-SHA256',
          'ECDHE-ECDSA-AES256-GCM-SHA384',
          'ECDHE-RSA-AES256-GCM-SHA384',
          'ECDHE-ECDSA-CHACHA20-POLY1305',
          'ECDHE-RSA-CHACHA20-POLY1305',
        ].join(':'),
      },
      logger: false,
      // Kubernetes' limit for request bodies is the limit for objects.
      bodyLimit: MAX_OBJECT_BYTES,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      clientErrorHandler: (error, socket) =>
        answerClientError(error, socket, {
          maxHeaderBytes: limits.maxRequestHeaderBytes,
          headersTimeoutMs: limits.requestHeadersTimeoutMs,
          requestTimeoutMs: limits.requestTimeoutMs,
          responding: (candidate) => this.guard.responding(candidate),
        }),
      forceCloseConnections: true,
      routerOptions: { maxParamLength: 8192 },
      return503OnClosing: true,
      // A URL fastify's router cannot decode (%FF, a truncated escape) or a path segment past
      // maxParamLength: a Status like every other error, not fastify's own error body.
      frameworkErrors: (error, _request, reply) => {
        const code = error.statusCode ?? 400;
        sendStatus(reply, code, code === 414 ? 'the request URL is too long' : `the request URL is not valid: ${error.message}`);
      },
    });
    this.app.removeAllContentTypeParsers();
    this.app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    this.app.route({ method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], url: '/*', handler: (request, reply) => this.serve(request, reply) });
    // The proxy subresources forward every method, and their bodies stream to the backend unread and unlimited.
    void this.app.register(async (proxyScope) => {
      proxyScope.removeAllContentTypeParsers();
      proxyScope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
      for (const url of PROXY_ROUTES) {
        proxyScope.route({ method: PROXY_METHODS, url, exposeHeadRoute: false, handler: (request, reply) => this.serve(request, reply, true) });
      }
    });
    this.app.setNotFoundHandler((request, reply) => sendStatus(reply, 405, `the server does not allow the method ${request.method}`));
    this.app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
      const code = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
      if (code === 500) options.logger.error({ err: error }, 'HTTP layer failed');
      sendStatus(reply, code, error.message);
    });
    // fastify routes no upgrade requests: they come here from Node's server and run the same pipeline.
    this.app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(request, socket, head));
    // fastify's server is an https.Server whenever `https` is given.
    this.guard.attach(this.app.server as unknown as TlsServer);
  }

  /**
   * Listens; port 0 picks a free port. Returns the port actually bound. With `fd`, accepts on that listening socket
   * (an API server worker thread's copy of the primary's) instead of binding.
   */
  async listen(host: string, port: number, fd?: number): Promise<number> {
    if (fd === undefined) await this.app.listen({ host, port });
    else {
      await this.app.ready();
      await new Promise<void>((resolve, reject) => {
        this.app.server.once('error', reject);
        this.app.server.listen({ fd }, () => {
          this.app.server.off('error', reject);
          resolve();
        });
      });
    }
    const address = this.app.server.address();
    // A TCP listener's address is an AddressInfo; only pipes and sockets give a string.
    if (address === null || typeof address === 'string') throw new Error(`the API server listens on ${address}, not on a TCP port`);
    // Without a listener, a failed accept (out of descriptors, of memory) would be an uncaught 'error' event.
    this.app.server.on('error', (err) => this.options.logger.warn({ err }, 'accepting a connection failed'));
    return address.port;
  }

  /** The descriptor of the listening socket (Linux), for API server worker threads to accept on too. */
  get listenFd(): number {
    const fd = (this.app.server as unknown as { _handle?: { fd?: number } })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) throw new Error('the API server has no listening socket descriptor');
    return fd;
  }

  /** Open client connections, TLS handshakes pending included. */
  get connectionCount(): number {
    return this.guard.size;
  }

  async close(): Promise<void> {
    this.guard.close();
    for (const socket of this.upgraded) socket.destroy();
    await this.app.close();
  }

  /** A connection whose request authenticated (as someone, not anonymously) is kept when connections run short. */
  private trustOnAuthentication(request: ApiRequest, socket: Duplex): void {
    onAuthenticated(request, (user: UserInfo) => {
      if (!user.groups.includes(UNAUTHENTICATED_GROUP)) this.guard.trust(socket);
    });
  }

  private async serve(request: FastifyRequest, reply: FastifyReply, proxied = false): Promise<void> {
    // The signal is made only for requests that read it (watches, waits): an abort builds a DOMException, and
    // every response's socket closes.
    let controller: AbortController | undefined;
    let closed = false;
    reply.raw.once('close', () => {
      closed = true;
      controller?.abort();
    });
    const apiRequest = toApiRequest(
      request,
      () => {
        if (!controller) {
          controller = new AbortController();
          if (closed) controller.abort();
        }
        return controller.signal;
      },
      proxied,
    );
    this.trustOnAuthentication(apiRequest, request.socket);
    const response = await this.options.handler.handle(apiRequest);
    // Only an upgrade request can be upgraded, and Node hands those to `upgrade`, never to fastify.
    if (response.upgrade) return sendStatus(reply, 400, 'Upgrade request required');
    await sendResponse(reply, negotiateProtobuf(apiRequest, response));
  }

  /**
   * An upgrade request: authenticated, authorized and audited like any other. A response that upgrades
   * takes the socket over; any other is written onto the socket, which then closes.
   */
  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    this.upgraded.add(socket);
    const closed = new AbortController();
    socket.on('error', () => socket.destroy());
    socket.once('close', () => {
      this.upgraded.delete(socket);
      closed.abort();
    });
    try {
      const apiRequest = upgradeApiRequest(request, closed.signal);
      this.trustOnAuthentication(apiRequest, socket);
      const response = await this.options.handler.handle(apiRequest);
      if (socket.destroyed) return;
      if (response.upgrade) response.upgrade(socket, head);
      else await writeRawResponse(socket, negotiateProtobuf(apiRequest, response));
    } catch (err) {
      this.options.logger.error({ err }, 'upgrade request failed');
      socket.destroy();
    }
  }
}

function sendStatus(reply: FastifyReply, code: number, message: string): void {
  reply.code(code).type('application/json').send(statusBody(code, message));
}

/** How often Node looks for requests past their timeouts: a quarter of the shorter one, between 250 ms and 5 s. */
function checkingInterval(limits: ConnectionLimits): number {
  return Math.min(5_000, Math.max(250, Math.floor(Math.min(limits.requestHeadersTimeoutMs, limits.requestTimeoutMs) / 4)));
}

function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}
