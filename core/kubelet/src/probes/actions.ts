import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { Container, GRPCAction, HTTPGetAction, LifecycleHandler, Pod, ProbeHandler, TCPSocketAction } from '@skiff/api';
import type { ContainerRuntime } from '@skiff/kernel';
import { KUBELET_VERSION } from '../names.js';

/** The container an action runs against, and where its pod is. */
export interface ActionTarget {
  pod: Pod;
  container: Container;
  containerId: string;
  podIP?: string;
}

/** What an action found: `success`, or `failure` with what it said (a probe's output, an HTTP status…). */
export interface ActionResult {
  outcome: 'success' | 'failure';
  output: string;
  /** An exec action's exit code. */
  exitCode?: number;
}

/** A probe's or a lifecycle hook's handler: one of exec, httpGet, tcpSocket, grpc (probes) or sleep (hooks). */
export type Handler = ProbeHandler & Pick<LifecycleHandler, 'sleep'>;

/** How much of an HTTP answer a probe keeps for its message (Kubernetes: 10 KiB). */
const MAX_HTTP_BODY = 10 * 1024;
/** The User-Agent of probes: `kube-probe/<major>.<minor>`. */
export const PROBE_USER_AGENT = `kube-probe/${/^v(\d+\.\d+)/.exec(KUBELET_VERSION)?.[1] ?? '0.0'}`;
/** grpc.health.v1 HealthCheckResponse statuses. */
const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

const success = (output = ''): ActionResult => ({ outcome: 'success', output });
const failure = (output: string): ActionResult => ({ outcome: 'failure', output });

/** A protobuf varint. */
function varint(value: number): number[] {
  const bytes: number[] = [];
  while (value > 0x7f) {
    bytes.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  bytes.push(value);
  return bytes;
}

/** A port by number or by the name of one of the container's ports. */
export function resolvePort(port: number | string, container: Container): number {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  const named = container.ports?.find((candidate) => candidate.name === port);
  if (!named) throw new Error(`couldn't find port: ${port} in container "${container.name}"`);
  return named.containerPort;
}

function hostOf(target: ActionTarget, host: string | undefined): string {
  const address = host || target.podIP;
  if (!address) throw new Error(`pod ${target.pod.metadata.namespace}/${target.pod.metadata.name} has no IP address yet`);
  return address;
}

const bracketed = (host: string) => (host.includes(':') ? `[${host}]` : host);

/** Go's words for a failed dial, which probe messages carry. */
function dialError(host: string, port: number, err: NodeJS.ErrnoException, timedOut: boolean): string {
  const address = `${bracketed(host)}:${port}`;
  if (timedOut) return `dial tcp ${address}: i/o timeout`;
  if (err.code === 'ECONNREFUSED') return `dial tcp ${address}: connect: connection refused`;
  if (err.code === 'EHOSTUNREACH') return `dial tcp ${address}: connect: no route to host`;
  return `dial tcp ${address}: ${err.message}`;
}

/** An exec action's command that ran past its timeout: the probe fails (it does not error). */
export class ExecTimeoutError extends Error {
  constructor(command: string[]) {
    super(`command ${JSON.stringify(command.join(' '))} timed out`);
    this.name = 'ExecTimeoutError';
  }
}

/**
 * Whether an error, or one it wraps (`cause`: the kubelet names unexpected runtime failures
 * SKIFF_ERR_KUBELET_RUNTIME_FAILED around the original), is a gRPC DeadlineExceeded — containerd's answer to an
 * ExecSync whose command outlived its timeout.
 */
export function isDeadlineExceeded(err: unknown): boolean {
  for (let depth = 0; depth < 8 && typeof err === 'object' && err !== null; depth++) {
    const { grpcCode, message } = err as { grpcCode?: unknown; message?: unknown };
    if (grpcCode === 'DeadlineExceeded') return true;
    if (typeof message === 'string' && message.startsWith('rpc error: code = DeadlineExceeded')) return true;
    err = (err as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs probe and lifecycle-hook handlers against a container: `exec` through the runtime's ExecSync, `httpGet`,
 * `tcpSocket` and `grpc` (grpc.health.v1) over the network to the pod's IP (or the handler's host), and `sleep`.
 * On a runtime with no processes behind its containers (`simulated`) the network handlers succeed without
 * dialling: its pod IPs lead nowhere.
 */
export class ActionRunner {
  constructor(private readonly runtime: ContainerRuntime) {}

  async run(handler: Handler, target: ActionTarget, timeoutSeconds: number): Promise<ActionResult> {
    if (handler.exec) return this.exec(handler.exec.command ?? [], target, timeoutSeconds);
    if (handler.sleep) {
      await new Promise((resolve) => setTimeout(resolve, handler.sleep!.seconds * 1000));
      return success();
    }
    const network = handler.httpGet ?? handler.tcpSocket ?? handler.grpc;
    if (!network) throw new Error('the handler names no action (exec, httpGet, tcpSocket, grpc or sleep)');
    if (this.runtime.simulated) return success();
    const timeoutMs = timeoutSeconds * 1000;
    if (handler.httpGet) return this.httpGet(handler.httpGet, target, timeoutMs);
    if (handler.tcpSocket) return this.tcpSocket(handler.tcpSocket, target, timeoutMs);
    return this.grpc(handler.grpc!, target, timeoutMs);
  }

  /**
   * The command's exit code decides; its output (stdout then stderr) is the message. A command that outlives
   * its timeout — the runtime answers DeadlineExceeded, or says nothing for a second past the timeout — is a
   * failure `command "<cmd>" timed out`, as in Kubernetes; any other runtime error is thrown (the probe errored).
   */
  async exec(command: string[], target: ActionTarget, timeoutSeconds: number): Promise<ActionResult> {
    if (!this.runtime.execSync) throw new Error(`container runtime "${this.runtime.name}" cannot run commands in containers (no ExecSync)`);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ExecTimeoutError(command)), (timeoutSeconds + 1) * 1000);
    });
    try {
      const result = await Promise.race([this.runtime.execSync(target.containerId, command, timeoutSeconds), timedOut]);
      const output = Buffer.concat([result.stdout, result.stderr]).toString('utf8');
      return { ...{}, ...(result.exitCode === 0 ? success(output) : failure(output)), exitCode: result.exitCode };
    } catch (err) {
      if (err instanceof ExecTimeoutError) return failure(err.message);
      if (isDeadlineExceeded(err)) return failure(new ExecTimeoutError(command).message);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A status from 200 to 399 is a success; anything else, or no whole answer within the timeout, a failure.
   * At most MAX_HTTP_BODY bytes of the body are read (the rest is dropped, as Kubernetes does), so a response
   * that streams or trickles forever settles by the cap or by the deadline.
   */
  httpGet(action: HTTPGetAction, target: ActionTarget, timeoutMs: number): Promise<ActionResult> {
    const host = hostOf(target, action.host);
    const port = resolvePort(action.port, target.container);
    const scheme = (action.scheme ?? 'HTTP').toLowerCase();
    const path = action.path ? (action.path.startsWith('/') ? action.path : `/${action.path}`) : '/';
    const url = `${scheme}://${bracketed(host)}:${port}${path}`;
    const headers: Record<string, string> = { 'User-Agent': PROBE_USER_AGENT, Accept: '*/*' };
    for (const header of action.httpHeaders ?? []) headers[header.name] = header.value;
    const send = scheme === 'https' ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
      let settled = false;
      let response: IncomingMessage | undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      const settle = (result: ActionResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        request.destroy();
        resolve(result);
      };
      const verdict = (answer: IncomingMessage) => {
        const status = answer.statusCode ?? 0;
        const body = Buffer.concat(chunks).toString('utf8');
        settle(status >= 200 && status < 400 ? success(body) : failure(`HTTP probe failed with statuscode: ${status}`));
      };
      const request = send(url, { method: 'GET', headers, rejectUnauthorized: false }, (answer: IncomingMessage) => {
        response = answer;
        answer.on('data', (chunk: Buffer) => {
          if (settled) return;
          chunks.push(chunk.subarray(0, MAX_HTTP_BODY - size));
          size += chunk.length;
          // Enough read: stop reading (destroying the request drops the rest) and judge by the status.
          if (size >= MAX_HTTP_BODY) verdict(answer);
        });
        answer.on('end', () => verdict(answer));
        answer.on('error', (err) => settle(failure(`Get "${url}": ${err.message}`)));
      });
      // One deadline for the whole exchange: http.request's own timeout only notices an idle socket.
      const deadline = setTimeout(
        () =>
          settle(
            failure(
              response
                ? `Get "${url}": context deadline exceeded (Client.Timeout or context cancellation while reading body)`
                : `Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
            ),
          ),
        timeoutMs,
      );
      request.on('error', (err: NodeJS.ErrnoException) => settle(failure(`Get "${url}": ${dialError(host, port, err, false)}`)));
      request.end();
    });
  }

  /** A connection that opens in time is a success. */
  tcpSocket(action: TCPSocketAction, target: ActionTarget, timeoutMs: number): Promise<ActionResult> {
    const host = hostOf(target, action.host);
    const port = resolvePort(action.port, target.container);
    return new Promise((resolve) => {
      const socket = connect({ host, port, timeout: timeoutMs });
      socket.once('connect', () => {
        socket.destroy();
        resolve(success());
      });
      socket.once('timeout', () => {
        socket.destroy();
        resolve(failure(dialError(host, port, new Error('timeout'), true)));
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(failure(dialError(host, port, err, false))));
    });
  }

  /** grpc.health.v1.Health/Check over HTTP/2 without TLS: SERVING is a success. */
  grpc(action: GRPCAction, target: ActionTarget, timeoutMs: number): Promise<ActionResult> {
    const host = hostOf(target, undefined);
    const address = `${bracketed(host)}:${action.port}`;
    const service = Buffer.from(action.service ?? '', 'utf8');
    // HealthCheckRequest { string service = 1 }, in a gRPC frame (no compression, 4-byte length).
    const message = service.length ? Buffer.concat([Buffer.from([0x0a, ...varint(service.length)]), service]) : Buffer.alloc(0);
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), message]);
    frame.writeUInt32BE(message.length, 1);
    return new Promise((resolve) => {
      const settle = (result: ActionResult) => {
        clearTimeout(timer);
        client.close();
        resolve(result);
      };
      const client = http2Connect(`http://${address}`);
      const timer = setTimeout(() => {
        client.destroy();
        resolve(failure(`timeout: health rpc did not complete within ${timeoutMs / 1000}s`));
      }, timeoutMs);
      client.on('error', (err: NodeJS.ErrnoException) =>
        settle(failure(`timeout: failed to connect service "${address}" within ${timeoutMs / 1000}s: ${err.message}`)),
      );
      const stream = client.request({
        ':method': 'POST',
        ':path': '/grpc.health.v1.Health/Check',
        'content-type': 'application/grpc',
        te: 'trailers',
        'user-agent': PROBE_USER_AGENT,
      });
      const chunks: Buffer[] = [];
      let grpcStatus: string | undefined;
      let grpcMessage = '';
      stream.on('response', (headers) => {
        if (headers['grpc-status'] !== undefined) grpcStatus = String(headers['grpc-status']);
      });
      stream.on('trailers', (trailers) => {
        grpcStatus = String(trailers['grpc-status'] ?? grpcStatus ?? '');
        grpcMessage = String(trailers['grpc-message'] ?? '');
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', (err) => settle(failure(`health rpc probe failed: ${err.message}`)));
      stream.on('end', () => {
        if (grpcStatus !== '0') return settle(failure(`health rpc probe failed: rpc error: code = ${grpcStatus ?? 'Unknown'} desc = ${grpcMessage}`));
        const body = Buffer.concat(chunks).subarray(5);
        // HealthCheckResponse { ServingStatus status = 1 } — absent means UNKNOWN (0).
        const status = body[0] === 0x08 ? (body[1] ?? 0) : 0;
        settle(status === 1 ? success() : failure(`service unhealthy (responded with "${SERVING_STATUS[status] ?? status}")`));
      });
      stream.end(frame);
    });
  }
}
