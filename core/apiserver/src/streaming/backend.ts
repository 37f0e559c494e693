import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';
import { hasToken } from './headers.js';

export const SPDY_UPGRADE = 'SPDY/3.1';
export const STREAM_PROTOCOL_HEADER = 'X-Stream-Protocol-Version';

/** How long connecting to the runtime's streaming server and reading its answer to the upgrade may take. */
const DIAL_TIMEOUT_MS = 10_000;
/** The most of a refusal's head and body kept for the error message. */
const MAX_HEAD_BYTES = 64 * 1024;

/** For https URLs: how to verify the server and what to present (default: verify against the system roots). */
export type DialTls = Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;

/** A streaming URL to upgrade at, and for an https URL how to dial it (a remote kubelet's: the API server's client certificate and the cluster CA). */
export interface StreamTarget {
  url: string;
  tls?: DialTls;
}

export interface UpgradeAttempt {
  method: 'GET' | 'POST';
  /** The protocol asked for in `Upgrade` (SPDY/3.1). */
  upgrade: string;
  /** Further request headers, one line each (X-Stream-Protocol-Version repeats). */
  headers: [string, string][];
  tls?: DialTls;
}

export interface Upgraded {
  upgraded: true;
  socket: Socket;
  /** The 101 response head as the runtime sent it, ending with the blank line. */
  rawHead: Buffer;
  /** Response headers, lower-case names, repeated ones joined with ', '. */
  headers: Record<string, string>;
  /** Bytes of the new protocol that arrived with the head. */
  rest: Buffer;
}

export interface Refused {
  upgraded: false;
  status: number;
  message: string;
}

/**
 * Connects to a container runtime's streaming URL (http or https, as CRI Exec/Attach/PortForward return it)
 * and asks to switch protocols. Resolves with the upgraded connection, or with the runtime's refusal (status
 * and body text); rejects when the runtime cannot be reached or does not answer in time.
 */
export async function dialUpgrade(streamUrl: string, attempt: UpgradeAttempt, signal?: AbortSignal): Promise<Upgraded | Refused> {
  const url = new URL(streamUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`unsupported streaming URL scheme ${url.protocol}`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const socket: Socket =
    url.protocol === 'https:' ? connectTls({ host, port, servername: /^[\d.:]+$/.test(host) ? undefined : host, ...attempt.tls }) : connectTcp({ host, port });
  // Whoever takes the connection over watches 'close'; an error in between must not go unhandled.
  socket.on('error', () => socket.destroy());
  const lines = [
    `${attempt.method} ${url.pathname}${url.search} HTTP/1.1`,
    `Host: ${url.host}`,
    'Connection: Upgrade',
    `Upgrade: ${attempt.upgrade}`,
    ...attempt.headers.map(([name, value]) => `${name}: ${value}`),
    'Content-Length: 0',
  ];
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  try {
    return await readAnswer(socket, attempt.upgrade, signal);
  } catch (err) {
    socket.destroy();
    throw err;
  }
}

function readAnswer(socket: Socket, upgrade: string, signal: AbortSignal | undefined): Promise<Upgraded | Refused> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    let head: { status: number; headers: Record<string, string>; rawHead: Buffer } | undefined;
    const timer = setTimeout(() => settle(new Error(`no answer from the container runtime within ${DIAL_TIMEOUT_MS / 1000}s`)), DIAL_TIMEOUT_MS);
    const onAbort = () => settle(new Error('the client went away'));
    signal?.addEventListener('abort', onAbort, { once: true });

    const settle = (outcome: Error | Upgraded | Refused) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', settle);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const refuse = (status: number, body: Buffer) => {
      socket.destroy();
      settle({ upgraded: false, status, message: body.toString('utf8').trim() || `HTTP ${status}` });
    };
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (!head) {
        const end = headEnd(buffered);
        if (end < 0) {
          if (buffered.length > MAX_HEAD_BYTES) settle(new Error('the container runtime sent an oversized response head'));
          return;
        }
        head = parseHead(buffered.subarray(0, end));
        if (!head) return settle(new Error('the container runtime sent a malformed HTTP response'));
        buffered = buffered.subarray(end);
        if (head.status === 101) {
          if (head.headers.upgrade?.toLowerCase() !== upgrade.toLowerCase() || !hasToken(head.headers.connection, 'upgrade')) {
            return refuse(500, Buffer.from('unable to upgrade: missing upgrade headers in response'));
          }
          // Paused until its new owner listens (and resumes it).
          socket.pause();
          return settle({ upgraded: true, socket, rawHead: head.rawHead, headers: head.headers, rest: buffered });
        }
      }
      const body = completeBody(head.headers, buffered);
      if (body) refuse(head.status, body);
      else if (buffered.length > MAX_HEAD_BYTES) refuse(head.status, buffered.subarray(0, MAX_HEAD_BYTES));
    };
    const onEnd = () => {
      if (head && head.status !== 101) refuse(head.status, buffered);
      else settle(new Error('the container runtime closed the connection without answering'));
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('error', settle);
  });
}

/** The offset just past the blank line ending the head, or -1 (Go's server also tolerates bare LFs). */
function headEnd(bytes: Buffer): number {
  const crlf = bytes.indexOf('\r\n\r\n');
  if (crlf >= 0) return crlf + 4;
  const lf = bytes.indexOf('\n\n');
  return lf >= 0 ? lf + 2 : -1;
}

function parseHead(rawHead: Buffer): { status: number; headers: Record<string, string>; rawHead: Buffer } | undefined {
  const [statusLine, ...lines] = rawHead.toString('latin1').split(/\r?\n/);
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '');
  if (!match) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return { status: Number(match[1]), headers, rawHead };
}

/** The body once it is complete by Content-Length or chunked framing; undefined while more is to come. */
function completeBody(headers: Record<string, string>, bytes: Buffer): Buffer | undefined {
  if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) return dechunk(bytes);
  const length = Number(headers['content-length'] ?? Number.NaN);
  if (Number.isInteger(length)) return bytes.length >= length ? bytes.subarray(0, length) : undefined;
  return undefined;
}

function dechunk(bytes: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', offset);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(bytes.subarray(offset, lineEnd).toString('latin1'), 16);
    if (!Number.isInteger(size)) return bytes;
    if (size === 0) return Buffer.concat(parts);
    if (bytes.length < lineEnd + 2 + size + 2) return undefined;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}
