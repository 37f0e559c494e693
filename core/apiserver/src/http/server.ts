import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { ApiHandler, Logger } from '@skiff/kernel';
import { negotiateProtobuf } from '../pipeline/negotiate.js';
import { writeRawResponse } from '../streaming/raw-response.js';
import { upgradeApiRequest } from '../streaming/upgrade-request.js';
import { sendResponse } from './send-response.js';
import { toApiRequest } from './to-api-request.js';

export interface HttpServerOptions {
  handler: ApiHandler;
  logger: Logger;
  tls: { key: string; cert: string; ca: string };
}

// Kubernetes's limit for request bodies.
const BODY_LIMIT = 3 * 1024 * 1024;

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  414: 'BadRequest',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
};

/**
 * The HTTPS front of the API server: fastify adapted to ApiRequest/ApiResponse. Bodies reach the pipeline
 * as raw buffers whatever their content type (it decodes JSON, YAML and the patch types, and answers 415
 * for the rest). Clients may present a certificate; the authenticators judge it.
 */
export class HttpServer {
  private readonly app: FastifyInstance;
  /** Connections handed over by upgrades (exec, attach, port-forward): fastify no longer tracks them. */
  private readonly upgraded = new Set<Duplex>();

  constructor(private readonly options: HttpServerOptions) {
    this.app = fastify({
      https: {
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
      bodyLimit: BODY_LIMIT,
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
    this.app.setNotFoundHandler((request, reply) => sendStatus(reply, 405, `the server does not allow the method ${request.method}`));
    this.app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
      const code = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
      if (code === 500) options.logger.error({ err: error }, 'HTTP layer failed');
      sendStatus(reply, code, error.message);
    });
    // fastify routes no upgrade requests: they come here from Node's server and run the same pipeline.
    this.app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(request, socket, head));
  }

  /** Listens; port 0 picks a free port. Returns the port actually bound. */
  async listen(host: string, port: number): Promise<number> {
    await this.app.listen({ host, port });
    const address = this.app.server.address();
    // A TCP listener's address is an AddressInfo; only pipes and sockets give a string.
    if (address === null || typeof address === 'string') throw new Error(`the API server listens on ${address}, not on a TCP port`);
    return address.port;
  }

  async close(): Promise<void> {
    for (const socket of this.upgraded) socket.destroy();
    await this.app.close();
  }

  private async serve(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // The signal is made only for requests that read it (watches, waits): an abort builds a DOMException, and
    // every response's socket closes.
    let controller: AbortController | undefined;
    let closed = false;
    reply.raw.once('close', () => {
      closed = true;
      controller?.abort();
    });
    const apiRequest = toApiRequest(request, () => {
      if (!controller) {
        controller = new AbortController();
        if (closed) controller.abort();
      }
      return controller.signal;
    });
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
  reply
    .code(code)
    .type('application/json')
    .send(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: REASONS[code] ?? 'InternalError', code }));
}
