import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { uptime } from 'node:os';
import type { Duplex } from 'node:stream';
import type { Pod } from '@skiff/api';
import { drained } from '@skiff/client';
import { gatherMetrics, METRICS_CONTENT_TYPE, type ApiClient, type Logger, type NodeConnection, type PodRef, type Registry } from '@skiff/kernel';
import { answerJson, answerRaw, answerText, failureOf, HttpFailure } from './answers.js';
import { authorizationErrorMessage, forbiddenMessage, kubeletAccess, KubeletAuth, type KubeletAuthCacheTtls } from './auth.js';
import { parseLogOptions } from './log-options.js';
import { decodeSegment, parsePorts, parseStreamPath, parseStreamRequest, type StreamTarget } from './stream-request.js';
import { proxyUpgrade } from './stream-proxy.js';
import { statsSummary } from './summary.js';
import { PROMETHEUS_TEXT_TYPE, resourceMetricsText } from '../stats/resource-metrics.js';
import type { UsageSnapshot } from '../stats/usage.js';

/** The kubelet's port (upstream's --port default). */
export const KUBELET_PORT = 10250;

/** The serving certificate and key, and the CA that client certificates must chain to. */
export interface KubeletServerTls {
  certPem: string;
  keyPem: string;
  clientCaPem: string;
}

export interface KubeletServerOptions {
  nodeName: string;
  /** Does the work: logs from the runtime's log files, the runtime's streaming URLs (the kubelet's KubeletNodeConnection). */
  connection: NodeConnection;
  /** The pods bound to this node as the kubelet sees them (for `/pods`, and the pod a request names). */
  pods: () => readonly Pod[];
  /** The kubelet's client of the API server, for TokenReview and SubjectAccessReview. */
  client: Pick<ApiClient, 'create'>;
  tls: KubeletServerTls;
  /** Listen address (default 0.0.0.0, as upstream's kubelet). */
  host?: string;
  /** Listen port (default 10250; 0 for a free one). */
  port?: number;
  logger: Logger;
  /** When the node started, for the stats Summary (default: this machine's boot time, as upstream reports its root cgroup's). */
  startTime?: Date;
  /** The usage sampler's readings, for `/stats/summary` and `/metrics/resource` (absent: no usage figures). */
  usage?: () => UsageSnapshot;
  /** What `/metrics` shows: the kernel's registry, kubelet_* metrics included (absent: no `/metrics`). */
  metrics?: Registry;
  /** How long review answers are kept (default: upstream's kubelet's cache times). */
  cacheTtls?: Partial<KubeletAuthCacheTtls>;
}

const GET_ONLY = new Set(['GET', 'HEAD']);

/**
 * The kubelet's HTTPS API, as upstream's kubelet serves it on port 10250 for the API server and other clients:
 * `/healthz`, `/pods`, `/containerLogs/…`, `/exec/…`, `/attach/…`, `/portForward/…` (upgrades proxied to the
 * container runtime's streaming server), `/stats/summary`, `/metrics/resource` and `/metrics`. Every request is authenticated (a client
 * certificate from the client CA, else a bearer token the API server reviews) and authorized by the API server
 * (SubjectAccessReview on the node's subresource) before anything else; errors are plain text, as upstream's.
 */
export class KubeletServer {
  private readonly server: Server;
  private readonly auth: KubeletAuth;
  private readonly sockets = new Set<Socket>();
  private readonly logger: Logger;
  private readonly startTime: Date;
  private clientCaPem: string;

  constructor(private readonly options: KubeletServerOptions) {
    const { tls } = options;
    this.clientCaPem = tls.clientCaPem;
    this.logger = options.logger;
    this.startTime = options.startTime ?? new Date(Math.floor(Date.now() / 1000 - uptime()) * 1000);
    this.auth = new KubeletAuth({ client: options.client, cacheTtls: options.cacheTtls });
    // The TLS layer asks for a certificate without requiring one (bearer tokens are a way in too); `authorized`
    // then says whether the one presented chains to the client CA.
    this.server = createServer({
      cert: tls.certPem,
      key: tls.keyPem,
      ca: tls.clientCaPem,
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
    });
    this.server.on('request', (request: IncomingMessage, response: ServerResponse) => void this.serve(request, response));
    this.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => void this.serveUpgrade(request, socket, head));
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('tlsClientError', (err, socket) => {
      this.logger.debug({ err, remoteAddress: socket.remoteAddress }, 'TLS handshake with a kubelet client failed');
    });
  }

  /** Starts listening; resolves with the port. */
  async listen(): Promise<number> {
    const host = this.options.host ?? '0.0.0.0';
    const port = this.options.port ?? KUBELET_PORT;
    await new Promise<void>((resolve, reject) => {
      const failed = (err: Error) => reject(new Error(`the kubelet server cannot listen on ${host}:${port}: ${err.message}`, { cause: err }));
      this.server.once('error', failed);
      this.server.listen(port, host, () => {
        this.server.off('error', failed);
        // Later failures (accepting a connection when out of file descriptors) are the listener's, not the process's.
        this.server.on('error', (err) => this.logger.warn({ err }, 'kubelet server error'));
        resolve();
      });
    });
    const bound = (this.server.address() as AddressInfo).port;
    this.logger.info({ host, port: bound }, 'kubelet server listening');
    return bound;
  }

  /** The port listened on; undefined before listen. */
  get port(): number | undefined {
    const address = this.server.address();
    return address && typeof address === 'object' ? address.port : undefined;
  }

  /** Serves new connections with a new certificate (a rotated one); open connections keep theirs. */
  setServingCertificate(certificate: { certPem: string; keyPem: string }): void {
    this.server.setSecureContext({ cert: certificate.certPem, key: certificate.keyPem, ca: this.clientCaPem, minVersion: 'TLSv1.2' });
  }

  /** Stops listening and ends every open connection (log reads and streams included). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /** The user of an allowed request, or the answer for one that is not. */
  private async admit(request: IncomingMessage, path: string): Promise<{ status: number; text: string } | undefined> {
    let user;
    try {
      user = await this.auth.authenticate(request);
    } catch (err) {
      this.logger.warn({ err }, 'unable to authenticate the request: the token review failed');
    }
    if (!user) return { status: 401, text: 'Unauthorized' };
    const access = kubeletAccess(this.options.nodeName, request.method ?? 'GET', path);
    let allowed: boolean;
    try {
      allowed = await this.auth.authorize(user, access);
    } catch (err) {
      this.logger.warn({ err, user: user.username, ...access }, 'authorization error: the subject access review failed');
      return { status: 500, text: authorizationErrorMessage(user, access) };
    }
    if (allowed) return undefined;
    this.logger.debug({ user: user.username, ...access }, 'forbidden');
    return { status: 403, text: forbiddenMessage(user, access) };
  }

  private async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'https://kubelet');
    try {
      const refusal = await this.admit(request, url.pathname);
      if (refusal) return answerText(response, refusal.status, refusal.text);
      await this.route(request, response, url);
    } catch (err) {
      const { status, text } = failureOf(err);
      if (status >= 500) this.logger.warn({ err, path: url.pathname }, 'kubelet request failed');
      if (!response.headersSent) answerText(response, status, text);
      else response.destroy();
    }
  }

  private async route(request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    const segments = path.split('/').slice(1);
    if (parseStreamPath(segments)) throw new HttpFailure(400, 'Upgrade request required');
    const handler = this.handlerOf(path, segments);
    if (!handler) throw new HttpFailure(404, '404 page not found');
    if (!GET_ONLY.has(request.method ?? '')) throw new HttpFailure(405, '405: Method Not Allowed');
    await handler(response, url.searchParams);
  }

  private handlerOf(path: string, segments: string[]): ((response: ServerResponse, query: URLSearchParams) => Promise<void> | void) | undefined {
    if (path === '/healthz') return (response) => answerText(response, 200, 'ok');
    if (path === '/pods' || path === '/pods/')
      return (response) => answerJson(response, 200, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: this.options.pods() });
    if (path === '/stats/summary' || path === '/stats/summary/')
      return (response) => answerJson(response, 200, statsSummary(this.options.nodeName, this.startTime, this.options.pods(), this.options.usage?.()));
    if (path === '/metrics/resource' || path === '/metrics/resource/')
      return (response) => answerText(response, 200, resourceMetricsText(this.options.usage?.() ?? { containers: [] }), PROMETHEUS_TEXT_TYPE);
    const { metrics } = this.options;
    if (metrics && (path === '/metrics' || path === '/metrics/'))
      return async (response) => answerText(response, 200, await (await gatherMetrics(metrics)).metrics(), METRICS_CONTENT_TYPE);
    if (segments[0] === 'containerLogs' && segments.length === 4) return (response, query) => this.containerLogs(response, query, segments.slice(1));
    return undefined;
  }

  /** `/containerLogs/{namespace}/{pod}/{container}`: the container's log as it is read, flushed chunk by chunk. */
  private async containerLogs(response: ServerResponse, query: URLSearchParams, escaped: string[]): Promise<void> {
    const [namespace, podName, container] = escaped.map(decodeSegment) as [string, string, string];
    if (!container) throw new HttpFailure(400, 'Missing container name.');
    const options = parseLogOptions(query);
    const pod = this.pod(namespace, podName);
    if (!pod) throw new HttpFailure(404, `pod "${podName}" does not exist`);
    const spec = pod.spec;
    const known = [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])].some((c) => c.name === container);
    if (!known) throw new HttpFailure(404, `container "${container}" not found in pod "${podName}"`);
    const stopped = new AbortController();
    response.once('close', () => stopped.abort());
    const chunks = await this.options.connection.containerLogs(refOf(pod), container, options, stopped.signal);
    response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-cache' });
    response.flushHeaders();
    try {
      for await (const chunk of chunks) {
        if (response.destroyed) break;
        if (chunk.length && !response.write(chunk)) await drained(response);
      }
      response.end();
    } catch (err) {
      // The head is out: breaking the connection off is how the reader learns the log did not end well.
      this.logger.warn({ err, pod: `${namespace}/${podName}`, container }, 'container log stream ended with an error');
      response.destroy();
    }
  }

  private async serveUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const url = new URL(request.url ?? '/', 'https://kubelet');
    try {
      const refusal = await this.admit(request, url.pathname);
      if (refusal) return answerRaw(socket, refusal.status, refusal.text);
      const target = parseStreamPath(url.pathname.split('/').slice(1));
      if (!target) throw new HttpFailure(400, `upgrades are served for exec, attach and portForward only, not ${url.pathname}`);
      const streamUrl = await this.streamUrl(target, url.searchParams);
      proxyUpgrade(socket, head, request, streamUrl);
    } catch (err) {
      const { status, text } = failureOf(err);
      if (status >= 500) this.logger.warn({ err, path: url.pathname }, 'kubelet stream request failed');
      answerRaw(socket, status, text);
    }
  }

  /** The runtime's streaming URL for an exec, attach or port-forward of a pod this kubelet has. */
  private async streamUrl(target: StreamTarget, query: URLSearchParams): Promise<string> {
    const { connection } = this.options;
    if (target.kind === 'portForward') {
      const ports = parsePorts(query);
      return connection.portForwardURL(this.streamPod(target), ports);
    }
    const request = parseStreamRequest(target.kind, query);
    return connection.streamURL(target.kind, this.streamPod(target), target.container!, request);
  }

  /**
   * The pod a stream request names, which this kubelet must have; a uid in the path picks that instance of it
   * (the runtime then finds nothing for a pod since replaced under the same name).
   */
  private streamPod(target: StreamTarget): PodRef {
    const pod = this.pod(target.namespace, target.pod);
    if (!pod) throw new HttpFailure(404, 'pod does not exist');
    return { ...{}, ...refOf(pod), ...(target.uid ? { uid: target.uid } : {}) };
  }

  private pod(namespace: string, name: string): Pod | undefined {
    return this.options.pods().find((pod) => pod.metadata.namespace === namespace && pod.metadata.name === name);
  }
}

function refOf(pod: Pod): PodRef {
  return { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '', uid: pod.metadata.uid ?? '' };
}
