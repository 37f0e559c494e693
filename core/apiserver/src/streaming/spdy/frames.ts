import { ByteQueue } from '../byte-queue.js';

// SPDY/3.1 framing (the Chromium "SPDY Protocol - Draft 3.1" document): an 8-byte header, then the payload.
// Control frames: 1 bit set, 15-bit version, 16-bit type, 8-bit flags, 24-bit length. Data frames: 1 bit
// clear, 31-bit stream id, 8-bit flags, 24-bit length.

export const SPDY_VERSION = 3;

export const FRAME_TYPE = Object.freeze({
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9,
});

/** FLAG_FIN on data frames and on SYN_STREAM, SYN_REPLY and HEADERS: the sender's half of the stream ends. */
export const FLAG_FIN = 0x01;

export const RST_STATUS = Object.freeze({
  PROTOCOL_ERROR: 1,
  INVALID_STREAM: 2,
  REFUSED_STREAM: 3,
  UNSUPPORTED_VERSION: 4,
  CANCEL: 5,
  INTERNAL_ERROR: 6,
  FLOW_CONTROL_ERROR: 7,
  STREAM_IN_USE: 8,
  STREAM_ALREADY_CLOSED: 9,
  FRAME_TOO_LARGE: 11,
});

export const GOAWAY_STATUS = Object.freeze({ OK: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2 });

export const SETTINGS_ID = Object.freeze({ MAX_CONCURRENT_STREAMS: 4, INITIAL_WINDOW_SIZE: 7 });

/** The 24-bit length field's limit. */
export const MAX_PAYLOAD = 0xffffff;
const STREAM_ID_MASK = 0x7fffffff;

export type Frame = ControlFrame | DataFrame;

export interface ControlFrame {
  control: true;
  version: number;
  type: number;
  flags: number;
  payload: Buffer;
}

export interface DataFrame {
  control: false;
  streamId: number;
  flags: number;
  payload: Buffer;
}

export class SpdyProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpdyProtocolError';
  }
}

/** Splits a byte stream into frames; `push` returns the frames completed by the chunk. */
export class FrameReader {
  private readonly queue = new ByteQueue();

  constructor(private readonly maxPayload: number = MAX_PAYLOAD) {}

  push(chunk: Buffer): Frame[] {
    this.queue.push(chunk);
    const frames: Frame[] = [];
    while (this.queue.length >= 8) {
      const length = this.queue.peek(8).readUInt32BE(4) & MAX_PAYLOAD;
      if (length > this.maxPayload) throw new SpdyProtocolError(`frame of ${length} bytes exceeds the limit of ${this.maxPayload}`);
      if (this.queue.length < 8 + length) break;
      frames.push(parseFrame(this.queue.take(8 + length)));
    }
    return frames;
  }
}

function parseFrame(bytes: Buffer): Frame {
  const first = bytes.readUInt32BE(0);
  const flags = bytes[4]!;
  const payload = bytes.subarray(8);
  if (first & 0x80000000) return { control: true, version: (first >>> 16) & 0x7fff, type: first & 0xffff, flags, payload };
  return { control: false, streamId: first & STREAM_ID_MASK, flags, payload };
}

export function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  if (payload.length > MAX_PAYLOAD) throw new SpdyProtocolError('control frame too large');
  const header = Buffer.alloc(8);
  header.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  header.writeUInt16BE(type, 2);
  header.writeUInt32BE(((flags << 24) | payload.length) >>> 0, 4);
  return Buffer.concat([header, payload]);
}

export function dataFrame(streamId: number, flags: number, payload: Buffer): Buffer {
  if (payload.length > MAX_PAYLOAD) throw new SpdyProtocolError('data frame too large');
  const header = Buffer.alloc(8);
  header.writeUInt32BE(streamId & STREAM_ID_MASK, 0);
  header.writeUInt32BE(((flags << 24) | payload.length) >>> 0, 4);
  return Buffer.concat([header, payload]);
}

// ---- control frame payloads ---------------------------------------------------------------------------

/** SYN_STREAM: stream id, associated-to stream id, 3-bit priority, 8-bit slot, then the compressed header block. */
export function synStreamPayload(streamId: number, headerBlock: Buffer, priority = 0, associatedTo = 0): Buffer {
  const fixed = Buffer.alloc(10);
  fixed.writeUInt32BE(streamId & STREAM_ID_MASK, 0);
  fixed.writeUInt32BE(associatedTo & STREAM_ID_MASK, 4);
  fixed[8] = (priority & 0x07) << 5;
  return Buffer.concat([fixed, headerBlock]);
}

export function parseSynStream(payload: Buffer): { streamId: number; associatedTo: number; priority: number; headerBlock: Buffer } {
  if (payload.length < 10) throw new SpdyProtocolError('SYN_STREAM too short');
  return {
    streamId: payload.readUInt32BE(0) & STREAM_ID_MASK,
    associatedTo: payload.readUInt32BE(4) & STREAM_ID_MASK,
    priority: payload[8]! >> 5,
    headerBlock: payload.subarray(10),
  };
}

/** SYN_REPLY and HEADERS: stream id, then the compressed header block. */
export function streamHeadersPayload(streamId: number, headerBlock: Buffer): Buffer {
  const fixed = Buffer.alloc(4);
  fixed.writeUInt32BE(streamId & STREAM_ID_MASK, 0);
  return Buffer.concat([fixed, headerBlock]);
}

export function parseStreamHeaders(payload: Buffer): { streamId: number; headerBlock: Buffer } {
  if (payload.length < 4) throw new SpdyProtocolError('SYN_REPLY or HEADERS too short');
  return { streamId: payload.readUInt32BE(0) & STREAM_ID_MASK, headerBlock: payload.subarray(4) };
}

/** RST_STREAM and WINDOW_UPDATE share one shape: a stream id and a 32-bit value (status, delta). */
export function streamValuePayload(streamId: number, value: number): Buffer {
  const payload = Buffer.alloc(8);
  payload.writeUInt32BE(streamId & STREAM_ID_MASK, 0);
  payload.writeUInt32BE(value >>> 0, 4);
  return payload;
}

export function parseStreamValue(payload: Buffer): { streamId: number; value: number } {
  if (payload.length !== 8) throw new SpdyProtocolError('RST_STREAM, GOAWAY or WINDOW_UPDATE of the wrong length');
  return { streamId: payload.readUInt32BE(0) & STREAM_ID_MASK, value: payload.readUInt32BE(4) };
}

export function pingPayload(id: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(id >>> 0, 0);
  return payload;
}

export function parsePing(payload: Buffer): number {
  if (payload.length !== 4) throw new SpdyProtocolError('PING of the wrong length');
  return payload.readUInt32BE(0);
}

/** SETTINGS: a count, then entries of 8-bit flags, 24-bit id and 32-bit value. */
export function settingsPayload(entries: { id: number; value: number; flags?: number }[]): Buffer {
  const payload = Buffer.alloc(4 + entries.length * 8);
  payload.writeUInt32BE(entries.length, 0);
  entries.forEach((entry, i) => {
    payload.writeUInt32BE((((entry.flags ?? 0) << 24) | (entry.id & 0xffffff)) >>> 0, 4 + i * 8);
    payload.writeUInt32BE(entry.value >>> 0, 8 + i * 8);
  });
  return payload;
}

export function parseSettings(payload: Buffer): { id: number; value: number; flags: number }[] {
  if (payload.length < 4) throw new SpdyProtocolError('SETTINGS too short');
  const count = payload.readUInt32BE(0);
  if (payload.length !== 4 + count * 8) throw new SpdyProtocolError('SETTINGS of the wrong length');
  const entries: { id: number; value: number; flags: number }[] = [];
  for (let i = 0; i < count; i++) {
    const flagsAndId = payload.readUInt32BE(4 + i * 8);
    entries.push({ flags: flagsAndId >>> 24, id: flagsAndId & 0xffffff, value: payload.readUInt32BE(8 + i * 8) });
  }
  return entries;
}

// ---- header blocks (before compression) ----------------------------------------------------------------

/** Header names and their values; SPDY joins several values of one name with NUL bytes. */
export type SpdyHeaders = Record<string, string[]>;

/** The uncompressed name/value block: a 32-bit count, then length-prefixed names (lower-case) and values. */
export function encodeHeaderBlock(headers: Record<string, string | string[]>): Buffer {
  const entries = Object.entries(headers);
  const parts: Buffer[] = [uint32(entries.length)];
  for (const [name, value] of entries) {
    const nameBytes = Buffer.from(name.toLowerCase(), 'utf8');
    const valueBytes = Buffer.from(Array.isArray(value) ? value.join('\0') : value, 'utf8');
    parts.push(uint32(nameBytes.length), nameBytes, uint32(valueBytes.length), valueBytes);
  }
  return Buffer.concat(parts);
}

export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  let offset = 0;
  const read = (): Buffer => {
    if (offset + 4 > block.length) throw new SpdyProtocolError('truncated header block');
    const length = block.readUInt32BE(offset);
    offset += 4;
    if (offset + length > block.length) throw new SpdyProtocolError('truncated header block');
    const bytes = block.subarray(offset, offset + length);
    offset += length;
    return bytes;
  };
  if (block.length < 4) throw new SpdyProtocolError('truncated header block');
  const count = block.readUInt32BE(0);
  offset = 4;
  const headers: SpdyHeaders = {};
  for (let i = 0; i < count; i++) {
    const name = read().toString('utf8').toLowerCase();
    const values = read().toString('utf8').split('\0');
    headers[name] = [...(headers[name] ?? []), ...values];
  }
  if (offset !== block.length) throw new SpdyProtocolError('trailing bytes after the header block');
  return headers;
}

function uint32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0, 0);
  return bytes;
}
