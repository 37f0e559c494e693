import type { Duplex } from 'node:stream';
import type { Status } from '@skiff/api';
import { endSoon } from '@skiff/client';
import type { Logger } from '@skiff/kernel';
import type { StreamTarget, Upgraded } from './backend.js';
import { throughRuntime } from './runtime-upgrade.js';
import { SpdySession, type SpdyStream, type StreamHandlers } from './spdy/session.js';
import { pauseUntilDrained } from './backpressure.js';
import { CLOSE_CODE, handshakeResponse, WebSocketConnection } from './websocket.js';

/** The channels of the k8s remotecommand WebSocket protocols: the first byte of every message. */
export const CHANNEL = Object.freeze({ STDIN: 0, STDOUT: 1, STDERR: 2, ERROR: 3, RESIZE: 4, CLOSE: 255 });

/** What a WebSocket subprotocol of exec/attach changes: base64 text frames, a JSON Status on the error channel, the v5 close signal. */
export interface ChannelProtocol {
  name: string;
  base64: boolean;
  jsonStatus: boolean;
  closeSignal: boolean;
}

/** In the server's order of preference (the server picks, as gorilla/websocket's upgrader does). */
export const REMOTECOMMAND_PROTOCOLS: readonly ChannelProtocol[] = Object.freeze([
  { name: 'v5.channel.k8s.io', base64: false, jsonStatus: true, closeSignal: true },
  { name: 'v4.channel.k8s.io', base64: false, jsonStatus: true, closeSignal: false },
  { name: 'v4.base64.channel.k8s.io', base64: true, jsonStatus: true, closeSignal: false },
  { name: 'channel.k8s.io', base64: false, jsonStatus: false, closeSignal: false },
  { name: 'base64.channel.k8s.io', base64: true, jsonStatus: false, closeSignal: false },
]);

/** The SPDY protocol asked of the runtime: v4 carries the command's outcome as a JSON Status (with the exit code). */
const RUNTIME_PROTOCOL = 'v4.channel.k8s.io';

export function chooseRemoteCommandProtocol(offered: string[]): ChannelProtocol | undefined {
  return REMOTECOMMAND_PROTOCOLS.find((protocol) => offered.includes(protocol.name));
}

export interface RemoteCommandStreams {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/**
 * exec and attach over WebSocket (kubectl 1.30+ speaks v5.channel.k8s.io) against a runtime that speaks SPDY
 * (v4.channel.k8s.io), as kube-apiserver's stream translator does: upgrade at the runtime's streaming URL, accept
 * the WebSocket, open the SPDY streams the runtime waits for (error, stdin, stdout, stderr, resize — each
 * named by its `streamType` header) and relay: channel 0 → stdin, stdout → 1, stderr → 2, channel 4 →
 * resize, the v5 close signal [255, 0] → the end of stdin. The runtime's error stream (a Status, carrying a
 * non-zero exit code as the cause ExitCode) goes out on channel 3; then the WebSocket closes normally.
 */
export function remoteCommandBridge(
  target: StreamTarget,
  key: string,
  protocol: ChannelProtocol,
  streams: RemoteCommandStreams,
  logger: Logger,
): (socket: Duplex, head: Buffer) => void {
  return throughRuntime(target, [RUNTIME_PROTOCOL], (client, head, runtime) => {
    client.write(handshakeResponse(key, protocol.name));
    new Bridge(client, head, runtime, protocol, streams, logger).start();
  });
}

class Bridge {
  private readonly ws: WebSocketConnection;
  private readonly session: SpdySession;
  private readonly runtimeJson: boolean;
  private readonly errorChunks: Buffer[] = [];
  private stdin: SpdyStream | undefined;
  private resize: SpdyStream | undefined;
  /** Client messages that arrive while the runtime's streams are being opened. */
  private pending: Buffer[] | undefined = [];
  private done = false;

  constructor(
    private readonly client: Duplex,
    head: Buffer,
    runtime: Upgraded,
    private readonly protocol: ChannelProtocol,
    private readonly streams: RemoteCommandStreams,
    private readonly logger: Logger,
  ) {
    this.runtimeJson = runtime.headers['x-stream-protocol-version']?.trim() === RUNTIME_PROTOCOL;
    this.ws = new WebSocketConnection(client, {
      message: (data, binary) => this.fromClient(data, binary),
      close: () => this.finish(undefined, 'client'),
    });
    this.session = new SpdySession(runtime.socket, runtime.rest);
    this.ws.receiveHead(head);
  }

  start(): void {
    void this.openStreams().catch((err: Error) => this.finish(failure(`error creating the streams of the container runtime: ${err.message}`)));
    void this.session.closed.then(() => this.finish(failure('the connection to the container runtime was lost')));
  }

  /** The streams in client-go's order; the runtime starts the command once it has them all. */
  private async openStreams(): Promise<void> {
    const { stdin, stdout, stderr, tty } = this.streams;
    const open = (type: string, handlers: StreamHandlers = {}) => this.session.openStream({ streamtype: type }, handlers);
    await open('error', {
      data: (chunk) => this.errorChunks.push(chunk),
      // The runtime writes the outcome, then resets every stream; a connection lost before that is a failure.
      end: (how) => this.finish(how === 'closed' && this.errorChunks.length === 0 ? failure('the connection to the container runtime was lost') : undefined),
    });
    if (stdin) this.stdin = await open('stdin');
    if (stdout) await open('stdout', { data: (chunk) => this.toClient(CHANNEL.STDOUT, chunk) });
    if (stderr && !tty) await open('stderr', { data: (chunk) => this.toClient(CHANNEL.STDERR, chunk) });
    if (tty) this.resize = await open('resize');
    const pending = this.pending ?? [];
    this.pending = undefined;
    for (const message of pending) this.relay(message);
  }

  private fromClient(data: Buffer, binary: boolean): void {
    const message = this.protocol.base64 && !binary ? decodeBase64Message(data) : data;
    if (!message || message.length === 0) return;
    if (this.pending) this.pending.push(message);
    else this.relay(message);
  }

  private relay(message: Buffer): void {
    const channel = message[0];
    const payload = message.subarray(1);
    if (channel === CHANNEL.STDIN && this.stdin) {
      if (!this.stdin.write(payload)) pauseUntilDrained(this.client, this.session.socket);
    } else if (channel === CHANNEL.RESIZE && this.resize) {
      this.resize.write(payload);
    } else if (channel === CHANNEL.CLOSE && this.protocol.closeSignal) {
      if (payload[0] === CHANNEL.STDIN) this.stdin?.end();
      else if (payload[0] === CHANNEL.RESIZE) this.resize?.end();
    }
  }

  private toClient(channel: number, data: Buffer): void {
    const sent = this.protocol.base64
      ? this.ws.send(Buffer.from(`${channel}${data.toString('base64')}`, 'latin1'), false)
      : this.ws.send(Buffer.concat([Buffer.from([channel]), data]));
    if (!sent) pauseUntilDrained(this.session.socket, this.client);
  }

  /**
   * Once: the runtime's outcome (or `override`, a failure of our own) on the error channel, then both
   * connections close. `by` 'client' means the client left: nothing is sent, the runtime is told to stop.
   */
  private finish(override: Status | undefined, by?: 'client'): void {
    if (this.done) return;
    this.done = true;
    if (by !== 'client') {
      const status = this.statusMessage(override);
      if (status.length) this.toClient(CHANNEL.ERROR, status);
      this.ws.close(CLOSE_CODE.NORMAL);
    }
    this.session.close();
    endSoon(this.session.socket);
    if (override) this.logger.debug({ reason: override.message }, 'exec/attach stream ended early');
  }

  /** What goes out on the error channel: the Status (v4, v5) or its message (the older protocols); nothing for success there. */
  private statusMessage(override: Status | undefined): Buffer {
    if (override) return Buffer.from(this.protocol.jsonStatus ? JSON.stringify(override) : (override.message ?? ''));
    const raw = Buffer.concat(this.errorChunks);
    if (raw.length === 0) return raw;
    const status = this.runtimeJson ? parseStatus(raw) : undefined;
    // A runtime that spoke an older protocol sent the error's text: v4 and v5 clients want a Status.
    if (this.protocol.jsonStatus) return status ? raw : Buffer.from(JSON.stringify(failure(raw.toString('utf8'))));
    if (!status) return raw;
    return status.status === 'Success' ? Buffer.alloc(0) : Buffer.from(typeof status.message === 'string' ? status.message : '');
  }
}

function failure(message: string): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'InternalError', code: 500 };
}

/** The runtime's Status, when its error channel holds JSON; only `status` and `message` are read. */
function parseStatus(raw: Buffer): { status?: unknown; message?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(raw.toString('utf8'));
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A base64 protocol's text message: the channel as a digit, then the payload in base64. */
function decodeBase64Message(data: Buffer): Buffer | undefined {
  const channel = data[0]! - 0x30;
  if (channel < 0 || channel > 9) return undefined;
  return Buffer.concat([Buffer.from([channel]), Buffer.from(data.subarray(1).toString('latin1'), 'base64')]);
}
