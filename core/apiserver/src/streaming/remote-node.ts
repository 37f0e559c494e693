import type { IncomingMessage } from 'node:http';
import { request as httpsRequest, type Agent } from 'node:https';
import { ApiError, errorMessage, errors, isJsonObject, type Node } from '@skiff/api';
import { readUpTo } from '@skiff/client';
import type { ContainerLogOptions, NodeConnection, NodeResourceUsage, PodRef, StreamRequest } from '@skiff/kernel';
import type { DialTls } from './backend.js';
import { usageOfSummary } from './summary-usage.js';

/** The kubelet's port when a Node does not report one (kube-apiserver's --kubelet-port default). */
export const DEFAULT_KUBELET_PORT = 10250;

/**
 * The order node addresses are tried in: kubeadm's --kubelet-preferred-address-types (InternalIP, ExternalIP,
 * Hostname), then the DNS names. kube-apiserver's own default puts Hostname first, but a kubelet's Hostname
 * address is its node name, which the API server's machine often cannot resolve.
 */
export const KUBELET_ADDRESS_PREFERENCE: readonly string[] = Object.freeze(['InternalIP', 'ExternalIP', 'Hostname', 'InternalDNS', 'ExternalDNS']);

/** How long the kubelet may take to answer a request's head. */
const ANSWER_TIMEOUT_MS = 10_000;
/** The most of an error answer's body kept for the message. */
const MAX_ERROR_BYTES = 64 * 1024;
/** The largest stats Summary read (a node of 110 pods answers a few hundred KiB). */
const MAX_SUMMARY_BYTES = 16 * 1024 * 1024;

export interface KubeletEndpoint {
  /** An address or host name, without brackets. */
  host: string;
  port: number;
}

/** Where a node's kubelet listens: its preferred address and reported kubelet port (10250 when it reports none). */
export function kubeletEndpoint(node: Node): KubeletEndpoint {
  const addresses = node.status?.addresses ?? [];
  const host = KUBELET_ADDRESS_PREFERENCE.map((type) => addresses.find((address) => address.type === type && address.address)?.address).find(Boolean);
  if (!host) {
    const known = addresses.map((address) => `{${address.type} ${address.address}}`).join(' ');
    throw errors.internal(`no preferred addresses found; known addresses: [${known}]`);
  }
  const reported = node.status?.daemonEndpoints?.kubeletEndpoint?.Port ?? 0;
  return { host, port: reported > 0 ? reported : DEFAULT_KUBELET_PORT };
}

/** What the API server presents to kubelets and verifies them against: its client certificate and the cluster CA. */
export interface KubeletClientTls {
  ca: string;
  cert: string;
  key: string;
}

/**
 * A node's kubelet over its HTTPS API, as kube-apiserver reaches it: logs from `/containerLogs`, and the
 * kubelet's `/exec`, `/attach` and `/portForward` as the streaming URLs (the kubelet proxies them to its
 * runtime). Dial those with `tls` (see `streamTlsOf`).
 */
export class RemoteNodeConnection implements NodeConnection {
  private readonly base: string;

  constructor(
    readonly endpoint: KubeletEndpoint,
    readonly tls: KubeletClientTls,
    private readonly agent?: Agent,
  ) {
    const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
    this.base = `https://${host}:${endpoint.port}`;
  }

  async containerLogs(pod: PodRef, container: string, options: ContainerLogOptions, signal: AbortSignal): Promise<AsyncIterable<Uint8Array>> {
    const url = `${this.base}/containerLogs/${segments(pod.namespace, pod.name, container)}${queryString(logQuery(options))}`;
    const response = await this.get(url, signal);
    const status = response.statusCode ?? 0;
    if (status < 200 || status > 206) throw answerError(status, response.headers['content-type'], await readUpTo(response, MAX_ERROR_BYTES));
    return bodyOf(response, signal);
  }

  /** The usage figures of the kubelet's stats Summary (`/stats/summary`, CPU and memory only). */
  async resourceUsage(signal: AbortSignal = AbortSignal.timeout(ANSWER_TIMEOUT_MS)): Promise<NodeResourceUsage> {
    const response = await this.get(`${this.base}/stats/summary?only_cpu_and_memory=true`, signal, 'application/json');
    const status = response.statusCode ?? 0;
    if (status !== 200) throw answerError(status, response.headers['content-type'], await readUpTo(response, MAX_ERROR_BYTES));
    const body = await readUpTo(response, MAX_SUMMARY_BYTES + 1);
    if (body.length > MAX_SUMMARY_BYTES) throw errors.internal(`the stats summary of the kubelet at ${this.base} is larger than ${MAX_SUMMARY_BYTES} bytes`);
    try {
      return usageOfSummary(JSON.parse(body.toString('utf8')));
    } catch (err) {
      throw errors.internal(`the kubelet at ${this.base} answered an unreadable stats summary: ${errorMessage(err)}`);
    }
  }

  async streamURL(kind: 'exec' | 'attach', pod: PodRef, container: string, request: Omit<StreamRequest, 'containerId'>): Promise<string> {
    // kube-apiserver's parameter names (PodExecOptions as the kubelet reads them): input, output, error, tty.
    const query = new URLSearchParams();
    for (const word of request.cmd ?? []) query.append('command', word);
    if (request.stdin) query.set('input', '1');
    if (request.stdout) query.set('output', '1');
    if (request.stderr) query.set('error', '1');
    if (request.tty) query.set('tty', '1');
    return `${this.base}/${kind}/${podSegments(pod)}/${encodeURIComponent(container)}${queryString(query)}`;
  }

  async portForwardURL(pod: PodRef, ports: number[]): Promise<string> {
    const query = new URLSearchParams();
    for (const port of ports) query.append('port', String(port));
    return `${this.base}/portForward/${podSegments(pod)}${queryString(query)}`;
  }

  /** Resolves with the kubelet's answer once its head arrived; the body is read by the caller. */
  private get(url: string, signal: AbortSignal, accept = 'text/plain, */*'): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const { ca, cert, key } = this.tls;
      const request = httpsRequest(url, { method: 'GET', ca, cert, key, agent: this.agent, signal, headers: { accept } });
      const timer = setTimeout(
        () => request.destroy(new Error(`no answer from the kubelet at ${this.base} within ${ANSWER_TIMEOUT_MS / 1000}s`)),
        ANSWER_TIMEOUT_MS,
      );
      request.once('response', (response) => {
        clearTimeout(timer);
        resolve(response);
      });
      request.once('error', (err) => {
        clearTimeout(timer);
        reject(signal.aborted ? errors.internal('the client went away') : errors.internal(`error dialing backend: ${errorMessage(err)}`));
      });
      request.end();
    });
  }
}

/** The TLS to dial a node connection's streaming URLs with: a remote kubelet's; undefined for the runtime's own URLs. */
export function streamTlsOf(connection: NodeConnection): DialTls | undefined {
  return connection instanceof RemoteNodeConnection ? connection.tls : undefined;
}

function segments(...parts: string[]): string {
  return parts.map(encodeURIComponent).join('/');
}

/** namespace/name/uid: the kubelet then serves the pod only while it is the one the API server read. */
function podSegments(pod: PodRef): string {
  return pod.uid ? segments(pod.namespace, pod.name, pod.uid) : segments(pod.namespace, pod.name);
}

function queryString(query: URLSearchParams): string {
  const text = query.toString();
  return text ? `?${text}` : '';
}

/** PodLogOptions as kube-apiserver hands them to the kubelet. */
function logQuery(options: ContainerLogOptions): URLSearchParams {
  const query = new URLSearchParams();
  if (options.follow) query.set('follow', 'true');
  if (options.previous) query.set('previous', 'true');
  if (options.timestamps) query.set('timestamps', 'true');
  if (options.sinceSeconds !== undefined) query.set('sinceSeconds', String(options.sinceSeconds));
  if (options.sinceTime !== undefined) query.set('sinceTime', options.sinceTime);
  if (options.tailLines !== undefined) query.set('tailLines', String(options.tailLines));
  if (options.limitBytes !== undefined) query.set('limitBytes', String(options.limitBytes));
  return query;
}

/**
 * A kubelet's refusal as the Status the API server answers: a Status it sent as it is, otherwise its text
 * (upstream's kubelet answers plain text) with its HTTP status, as kube-apiserver's response checker does.
 */
function answerError(status: number, contentType: string | undefined, body: Buffer): ApiError {
  const text = body.toString('utf8').trim();
  if (contentType?.startsWith('application/json')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (isJsonObject(parsed) && parsed.kind === 'Status') return ApiError.fromStatus(parsed, status);
    } catch {
      // Not JSON after all: the text is the message.
    }
  }
  return ApiError.fromStatus({ message: text || `the kubelet answered HTTP ${status}` }, status >= 400 && status < 600 ? status : 500);
}

/** The log's bytes as they come; the read ends quietly when the caller stops it, and fails when the kubelet breaks off. */
async function* bodyOf(response: IncomingMessage, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) yield chunk;
  } catch (err) {
    if (!signal.aborted) throw err;
  } finally {
    response.destroy();
  }
}
