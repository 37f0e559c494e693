import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { ByteQueue } from './byte-queue.js';
import { hasToken, headerList } from './headers.js';
import { errorMessage } from '@skiff/api';

// RFC 6455, the server side: the opening handshake, frames, fragmented messages, ping/pong and the closing
// handshake. No extensions are negotiated (kubectl's gorilla/websocket client offers none by default), so every
// RSV bit must be clear.

const HANDSHAKE_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export const OPCODE = Object.freeze({ CONTINUATION: 0x0, TEXT: 0x1, BINARY: 0x2, CLOSE: 0x8, PING: 0x9, PONG: 0xa });

export const CLOSE_CODE = Object.freeze({
  NORMAL: 1000,
  GOING_AWAY: 1001,
  PROTOCOL_ERROR: 1002,
  UNSUPPORTED_DATA: 1003,
  /** Never sent: what a close frame without a code reports. */
  NO_STATUS: 1005,
  /** Never sent: what a connection that ended without a close frame reports. */
  ABNORMAL: 1006,
  INVALID_PAYLOAD: 1007,
  MESSAGE_TOO_BIG: 1009,
  INTERNAL_ERROR: 1011,
});

/** The largest message a client may send (stdin chunks and port-forward frames are far smaller). */
const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/**
 * How long the socket may stay open once we have sent a close frame or ended our side: a peer that never
 * answers, or never closes its side of the TCP connection, has its socket destroyed after this.
 */
const CLOSE_TIMEOUT_MS = 5_000;
const MAX_CONTROL_PAYLOAD = 125;
/** A close frame's reason: what is left of a control frame's payload after the 2-byte code. */
const MAX_CLOSE_REASON_BYTES = MAX_CONTROL_PAYLOAD - 2;

/**
 * Whether `code` may appear in a close frame on the wire (RFC 6455 §7.4 and the IANA registry): the defined
 * codes except 1004 (reserved), 1005 and 1006 (never sent) and 1015 (TLS failure, never sent), and the ranges
 * for libraries (3000-3999) and applications (4000-4999). Everything else is reserved or out of range.
 */
export function isValidCloseCode(code: number): boolean {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
}

/** The UTF-8 bytes of `text`, cut at a character boundary to at most `max` bytes. */
function utf8Prefix(text: string, max: number): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return bytes;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // step back off continuation bytes
  return bytes.subarray(0, end);
}

/** A `Connection: Upgrade` + `Upgrade: websocket` request (header names lower-case). */
export function isWebSocketRequest(headers: Record<string, string | undefined>): boolean {
  return headers.upgrade?.trim().toLowerCase() === 'websocket' && hasToken(headers.connection, 'upgrade');
}

/** The subprotocols a client offers in Sec-WebSocket-Protocol, in its order. */
export function offeredProtocols(headers: Record<string, string | undefined>): string[] {
  return headerList(headers['sec-websocket-protocol']);
}

/** Why the handshake request cannot be accepted, or undefined when it can. */
export function handshakeProblem(headers: Record<string, string | undefined>): string | undefined {
  if (!isWebSocketRequest(headers)) return 'not a websocket upgrade request';
  if (headers['sec-websocket-version']?.trim() !== '13') return 'unsupported websocket version (only 13 is)';
  const key = headers['sec-websocket-key']?.trim() ?? '';
  if (!/^[A-Za-z0-9+/]{22}==$/.test(key)) return 'missing or malformed Sec-WebSocket-Key';
  return undefined;
}

export function acceptKey(key: string): string {
  return createHash('sha1').update(`${key.trim()}${HANDSHAKE_GUID}`).digest('base64');
}

/** The 101 answer to a valid handshake request; `protocol` is the subprotocol chosen from the client's offer. */
export function handshakeResponse(key: string, protocol: string | undefined): string {
  const lines = ['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Accept: ${acceptKey(key)}`];
  if (protocol) lines.push(`Sec-WebSocket-Protocol: ${protocol}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

export interface Frame {
  fin: boolean;
  opcode: number;
  payload: Buffer;
}

/** A violation of RFC 6455 by the peer, with the close code to answer it with. */
export class WebSocketProtocolError extends Error {
  constructor(
    readonly closeCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'WebSocketProtocolError';
  }
}

/** Encodes one frame. Servers send unmasked frames; pass `mask` (4 bytes) to encode as a client does. */
export function encodeFrame(opcode: number, payload: Buffer, options: { fin?: boolean; mask?: Buffer } = {}): Buffer {
  const { fin = true, mask } = options;
  const length = payload.length;
  const lengthBytes = length < 126 ? 0 : length <= 0xffff ? 2 : 8;
  const header = Buffer.alloc(2 + lengthBytes + (mask ? 4 : 0));
  header[0] = (fin ? 0x80 : 0) | opcode;
  header[1] = (mask ? 0x80 : 0) | (lengthBytes === 0 ? length : lengthBytes === 2 ? 126 : 127);
  if (lengthBytes === 2) header.writeUInt16BE(length, 2);
  else if (lengthBytes === 8) header.writeBigUInt64BE(BigInt(length), 2);
  if (!mask) return Buffer.concat([header, payload]);
  mask.copy(header, 2 + lengthBytes);
  return Buffer.concat([header, applyMask(payload, mask)]);
}

function applyMask(payload: Buffer, mask: Buffer): Buffer {
  const out = Buffer.allocUnsafe(payload.length);
  for (let i = 0; i < payload.length; i++) out[i] = payload[i]! ^ mask[i & 3]!;
  return out;
}

/**
 * Splits the bytes a client sends into frames, unmasking them. Throws WebSocketProtocolError for frames a
 * server must refuse: unmasked, RSV bits set, unknown opcodes, fragmented or oversized control frames.
 */
export class FrameParser {
  private readonly queue = new ByteQueue();

  constructor(private readonly maxFrameBytes: number = DEFAULT_MAX_MESSAGE_BYTES) {}

  push(chunk: Buffer): Frame[] {
    this.queue.push(chunk);
    const frames: Frame[] = [];
    for (let frame = this.next(); frame; frame = this.next()) frames.push(frame);
    return frames;
  }

  private next(): Frame | undefined {
    const queue = this.queue;
    if (queue.length < 2) return undefined;
    const header = queue.peek(Math.min(queue.length, 10));
    const first = header[0]!;
    const second = header[1]!;
    const fin = (first & 0x80) !== 0;
    const opcode = first & 0x0f;
    if (first & 0x70) throw new WebSocketProtocolError(CLOSE_CODE.PROTOCOL_ERROR, 'reserved bits set without a negotiated extension');
    if (!Object.values(OPCODE).includes(opcode as never)) throw new WebSocketProtocolError(CLOSE_CODE.PROTOCOL_ERROR, `unknown opcode ${opcode}`);
    if ((second & 0x80) === 0) throw new WebSocketProtocolError(CLOSE_CODE.PROTOCOL_ERROR, 'client frames must be masked');
    const control = opcode >= OPCODE.CLOSE;
    let length = second & 0x7f;
    let offset = 2;
    if (length === 126) {
      if (header.length < 4) return undefined;
      length = header.readUInt16BE(2);
      offset = 4;
    } else if (length === 127) {
      if (header.length < 10) return undefined;
      const long = header.readBigUInt64BE(2);
      if (long > BigInt(this.maxFrameBytes)) throw new WebSocketProtocolError(CLOSE_CODE.MESSAGE_TOO_BIG, 'frame too large');
      length = Number(long);
      offset = 10;
    }
    if (control && (!fin || length > MAX_CONTROL_PAYLOAD))
      throw new WebSocketProtocolError(CLOSE_CODE.PROTOCOL_ERROR, 'control frames must be whole and short');
    if (length > this.maxFrameBytes) throw new WebSocketProtocolError(CLOSE_CODE.MESSAGE_TOO_BIG, 'frame too large');
    if (queue.length < offset + 4 + length) return undefined;
    const frame = queue.take(offset + 4 + length);
    return { fin, opcode, payload: applyMask(frame.subarray(offset + 4), frame.subarray(offset, offset + 4)) };
  }
}

export interface WebSocketHandlers {
  /** A whole message (fragments joined). */
  message(data: Buffer, binary: boolean): void;
  /** Once, when the connection is over: the peer's close code, or 1006 when the socket ended without one. */
  close(code: number, reason: string): void;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** An accepted WebSocket connection, server side. Sends go straight to the socket; `send` reports its backpressure. */
export class WebSocketConnection {
  private readonly parser: FrameParser;
  private fragments: Buffer[] = [];
  private fragmentedOpcode: number | undefined;
  private fragmentedBytes = 0;
  private closeSent = false;
  private finished = false;
  private closeTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly socket: Duplex,
    private readonly handlers: WebSocketHandlers,
    private readonly maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES,
  ) {
    this.parser = new FrameParser(maxMessageBytes);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      clearTimeout(this.closeTimer);
      this.finish(CLOSE_CODE.ABNORMAL, '');
    });
  }

  /** Feeds bytes that arrived with the upgrade request (after its headers). */
  receiveHead(head: Buffer): void {
    if (head.length) this.receive(head);
  }

  /** Sends one message; false when the socket's buffer is full (wait for its 'drain'). */
  send(data: Buffer, binary = true): boolean {
    if (this.closeSent || this.socket.destroyed) return true;
    return this.socket.write(encodeFrame(binary ? OPCODE.BINARY : OPCODE.TEXT, data));
  }

  /** Starts the closing handshake; the socket ends when the peer answers, or after a timeout. */
  close(code: number = CLOSE_CODE.NORMAL, reason = ''): void {
    if (this.closeSent || this.socket.destroyed) return;
    this.closeSent = true;
    const text = utf8Prefix(reason, MAX_CLOSE_REASON_BYTES);
    const payload = Buffer.alloc(2 + text.length);
    payload.writeUInt16BE(code, 0);
    text.copy(payload, 2);
    this.socket.write(encodeFrame(OPCODE.CLOSE, payload));
    this.destroyLater();
  }

  /** Ends our side of the socket; it is destroyed if the peer has not closed its side within the timeout. */
  private end(): void {
    this.socket.end();
    this.destroyLater();
  }

  /** Arms the timer that destroys the socket; only its 'close' clears it. */
  private destroyLater(): void {
    if (this.closeTimer || this.socket.destroyed) return;
    this.closeTimer = setTimeout(() => this.socket.destroy(), CLOSE_TIMEOUT_MS);
    this.closeTimer.unref();
  }

  private receive(chunk: Buffer): void {
    if (this.finished) return;
    try {
      for (const frame of this.parser.push(chunk)) {
        this.handle(frame);
        if (this.finished) return;
      }
    } catch (err) {
      const code = err instanceof WebSocketProtocolError ? err.closeCode : CLOSE_CODE.INTERNAL_ERROR;
      this.close(code, errorMessage(err));
      this.end();
      this.finish(code, errorMessage(err));
    }
  }

  private handle(frame: Frame): void {
    switch (frame.opcode) {
      case OPCODE.PING:
        if (!this.closeSent) this.socket.write(encodeFrame(OPCODE.PONG, frame.payload));
        return;
      case OPCODE.PONG:
        return;
      case OPCODE.CLOSE:
        return this.receiveClose(frame.payload);
      case OPCODE.CONTINUATION:
        if (this.fragmentedOpcode === undefined) throw new WebSocketProtocolError(CLOSE_CODE.PROTOCOL_ERROR, 'continuation frame without a message');
        return this.collect(this.fragmentedOpcode, frame);
      default:
        if (this.fragmentedOpcode !== undefined) throw new WebSocketProtocolError(CLOSE_CODE.PROTOCOL_ERROR, 'new message before the last one ended');
        return this.collect(frame.opcode, frame);
    }
  }

  private collect(opcode: number, frame: Frame): void {
    this.fragmentedBytes += frame.payload.length;
    if (this.fragmentedBytes > this.maxMessageBytes) throw new WebSocketProtocolError(CLOSE_CODE.MESSAGE_TOO_BIG, 'message too large');
    if (!frame.fin) {
      this.fragmentedOpcode = opcode;
      this.fragments.push(frame.payload);
      return;
    }
    const data = this.fragments.length ? Buffer.concat([...this.fragments, frame.payload]) : frame.payload;
    this.fragments = [];
    this.fragmentedOpcode = undefined;
    this.fragmentedBytes = 0;
    if (opcode === OPCODE.TEXT) {
      try {
        utf8.decode(data);
      } catch {
        throw new WebSocketProtocolError(CLOSE_CODE.INVALID_PAYLOAD, 'text message is not UTF-8');
      }
    }
    this.handlers.message(data, opcode === OPCODE.BINARY);
  }

  private receiveClose(payload: Buffer): void {
    if (payload.length === 1) throw new WebSocketProtocolError(CLOSE_CODE.PROTOCOL_ERROR, 'malformed close frame');
    // No code in the frame: report 1005 (no status received) as the code, but never send it (§7.1.5).
    const code = payload.length >= 2 ? payload.readUInt16BE(0) : CLOSE_CODE.NO_STATUS;
    if (payload.length >= 2 && !isValidCloseCode(code)) throw new WebSocketProtocolError(CLOSE_CODE.PROTOCOL_ERROR, `invalid close code ${code}`);
    let reason = '';
    try {
      reason = utf8.decode(payload.subarray(2));
    } catch {
      throw new WebSocketProtocolError(CLOSE_CODE.INVALID_PAYLOAD, 'close reason is not UTF-8');
    }
    // Answer with the same code (RFC 6455 §5.5.1), then end our side: the peer closes the TCP connection.
    if (!this.closeSent) {
      this.closeSent = true;
      this.socket.write(encodeFrame(OPCODE.CLOSE, payload.subarray(0, 2)));
    }
    this.end();
    this.finish(code, reason);
  }

  private finish(code: number, reason: string): void {
    if (this.finished) return;
    this.finished = true;
    this.handlers.close(code, reason);
  }
}
