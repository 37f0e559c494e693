// A stand-in for a container runtime's streaming server (containerd's CRI stream server), for tests: it
// answers `POST /exec|attach|portforward/<token>` upgrades to SPDY/3.1, accepts the client's streams, and
// plays a scripted command the way the kubelet's streaming library does — output, then the Status on the
// error stream, then every stream reset, GOAWAY and the connection closed.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  controlFrame,
  dataFrame,
  decodeHeaderBlock,
  encodeHeaderBlock,
  FLAG_FIN,
  FRAME_TYPE,
  FrameReader,
  GOAWAY_STATUS,
  parseStreamValue,
  parseSynStream,
  RST_STATUS,
  streamHeadersPayload,
  streamValuePayload,
  type Frame,
} from '../streaming/spdy/frames.js';
import { HeaderCompressor, HeaderDecompressor } from '../streaming/spdy/header-compression.js';

export interface RuntimeStream {
  id: number;
  type: string;
  headers: Record<string, string[]>;
  received: Buffer[];
  ended: boolean;
  write(data: Buffer): void;
  end(): void;
}

/** What a scripted command does once its streams are there; resolve with the exit code (0: success). */
export type Script = (streams: Map<string, RuntimeStream>, session: RuntimeSession) => Promise<number | { failure: string }>;

export interface RuntimeSession {
  request: { method: string; url: string; headers: IncomingMessage['headers'] };
  /** Resolves when a stream's incoming half ended (FIN or reset). */
  ended(type: string): Promise<void>;
}

export interface TestRuntime {
  url(kind: string, token: string): string;
  /** Serves `kind/token` once with this script, expecting these stream types. */
  expect(kind: string, token: string, streams: string[], script: Script): void;
  requests: { method: string; url: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

const SUPPORTED = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io', 'portforward.k8s.io'];

export async function startTestRuntime(): Promise<TestRuntime> {
  const scripts = new Map<string, { streams: string[]; script: Script }>();
  const requests: TestRuntime['requests'] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('not an upgrade');
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers };
    requests.push(request);
    const path = (req.url ?? '').replace(/^\//, '');
    const entry = scripts.get(path);
    if (!entry) return refuse(socket, '404 Not Found', 'invalid or expired token');
    scripts.delete(path);
    const offered = req.headersDistinct['x-stream-protocol-version'] ?? [];
    const chosen = SUPPORTED.find((protocol) => offered.includes(protocol));
    if (!chosen) {
      return refuse(socket, '403 Forbidden', `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}]`);
    }
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${chosen}\r\n\r\n`);
    void serveSession(socket, head, request, entry.streams, entry.script);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (kind, token) => `http://127.0.0.1:${port}/${kind}/${token}`,
    expect: (kind, token, streams, script) => scripts.set(`${kind}/${token}`, { streams, script }),
    requests,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function refuse(socket: Socket, status: string, body: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

async function serveSession(socket: Socket, head: Buffer, request: RuntimeSession['request'], expected: string[], script: Script): Promise<void> {
  const reader = new FrameReader();
  const compressor = new HeaderCompressor();
  const decompressor = new HeaderDecompressor();
  const streams = new Map<string, RuntimeStream>();
  const byId = new Map<number, RuntimeStream>();
  const endWaiters = new Map<string, () => void>();
  const endPromises = new Map<string, Promise<void>>();
  let allThere!: () => void;
  const ready = new Promise<void>((resolve) => (allThere = resolve));
  const queue: Frame[] = [];
  let busy = false;

  const endOf = (type: string) => {
    if (!endPromises.has(type)) endPromises.set(type, new Promise((resolve) => endWaiters.set(type, resolve)));
    return endPromises.get(type)!;
  };
  const finishRemote = (stream: RuntimeStream) => {
    if (stream.ended) return;
    stream.ended = true;
    endOf(stream.type);
    endWaiters.get(stream.type)?.();
  };
  const handle = async (frame: Frame) => {
    if (!frame.control) {
      const stream = byId.get(frame.streamId);
      if (!stream) return;
      if (frame.payload.length) stream.received.push(frame.payload);
      if (frame.flags & FLAG_FIN) finishRemote(stream);
      return;
    }
    if (frame.type === FRAME_TYPE.SYN_STREAM) {
      const { streamId, headerBlock } = parseSynStream(frame.payload);
      const headers = decodeHeaderBlock(await decompressor.decompress(headerBlock));
      const type = headers.streamtype?.[0] ?? '';
      const stream: RuntimeStream = {
        id: streamId,
        type,
        headers,
        received: [],
        ended: false,
        write: (data) => socket.write(dataFrame(streamId, 0, data)),
        end: () => socket.write(dataFrame(streamId, FLAG_FIN, Buffer.alloc(0))),
      };
      byId.set(streamId, stream);
      // Port-forward streams come in pairs per request id; exec and attach name one stream per type.
      streams.set(headers.requestid ? `${type}:${headers.requestid[0]}` : type, stream);
      const reply = await compressor.compress(encodeHeaderBlock({}));
      socket.write(controlFrame(FRAME_TYPE.SYN_REPLY, 0, streamHeadersPayload(streamId, reply)));
      if (expected.every((name) => streams.has(name))) allThere();
    } else if (frame.type === FRAME_TYPE.RST_STREAM) {
      const stream = byId.get(parseStreamValue(frame.payload).streamId);
      if (stream) finishRemote(stream);
    }
  };
  socket.on('data', (chunk: Buffer) => {
    queue.push(...reader.push(chunk));
    if (busy) return;
    busy = true;
    void (async () => {
      while (queue.length) await handle(queue.shift()!);
      busy = false;
    })();
  });
  socket.on('close', () => {
    for (const stream of byId.values()) finishRemote(stream);
    compressor.close();
    decompressor.close();
  });
  if (head.length) socket.emit('data', head);
  await ready;
  const outcome = await script(streams, { request, ended: endOf });
  const error = streams.get('error');
  if (error) {
    const status =
      outcome === 0
        ? { metadata: {}, status: 'Success' }
        : typeof outcome === 'number'
          ? {
              metadata: {},
              status: 'Failure',
              message: `command terminated with non-zero exit code: exit status ${outcome}`,
              reason: 'NonZeroExitCode',
              details: { causes: [{ reason: 'ExitCode', message: String(outcome) }] },
            }
          : { metadata: {}, status: 'Failure', message: outcome.failure, reason: 'InternalError', code: 500 };
    error.write(Buffer.from(JSON.stringify(status)));
  }
  for (const stream of byId.values()) socket.write(controlFrame(FRAME_TYPE.RST_STREAM, 0, streamValuePayload(stream.id, RST_STATUS.CANCEL)));
  socket.write(controlFrame(FRAME_TYPE.GOAWAY, 0, streamValuePayload(0, GOAWAY_STATUS.OK)));
  socket.end();
}

/** Everything a runtime stream received, as text. */
export function receivedText(stream: RuntimeStream | undefined): string {
  return Buffer.concat(stream?.received ?? []).toString('utf8');
}
