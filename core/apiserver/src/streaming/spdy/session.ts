import type { Duplex } from 'node:stream';
import {
  controlFrame,
  dataFrame,
  decodeHeaderBlock,
  encodeHeaderBlock,
  FLAG_FIN,
  FRAME_TYPE,
  FrameReader,
  GOAWAY_STATUS,
  parsePing,
  parseStreamHeaders,
  parseStreamValue,
  parseSynStream,
  pingPayload,
  RST_STATUS,
  SPDY_VERSION,
  SpdyProtocolError,
  streamValuePayload,
  synStreamPayload,
  type ControlFrame,
  type DataFrame,
  type Frame,
} from './frames.js';
import { HeaderCompressor, HeaderDecompressor } from './header-compression.js';

/** How a stream's incoming half ended: the peer's FIN, its RST_STREAM, or the connection closing. */
export type StreamEnd = 'fin' | 'reset' | 'closed';

export interface StreamHandlers {
  data?(chunk: Buffer): void;
  /** Called once, when nothing more will arrive on the stream. */
  end?(how: StreamEnd): void;
}

/** How long a new stream waits for the peer's SYN_REPLY (client-go waits 30 s too). */
const REPLY_TIMEOUT_MS = 30_000;
/** Data frames are cut to this size; the protocol allows 16 MiB. */
const MAX_DATA_FRAME = 64 * 1024;
/** The receive window SPDY/3.1 starts every stream (and the session) with; updates go out at half of it. */
const WINDOW_UPDATE_THRESHOLD = 32 * 1024;

const SOCKET_CLOSED = Symbol('socket closed');

interface StreamState {
  stream: SpdyStream;
  handlers: StreamHandlers;
  replied: boolean;
  remoteEnded: boolean;
  localEnded: boolean;
  unacknowledged: number;
  reply?: { resolve(): void; reject(err: Error): void; timer: NodeJS.Timeout };
}

/** One stream a SpdySession opened: write to the peer with `write`, half-close with `end`. */
export class SpdyStream {
  constructor(
    readonly id: number,
    private readonly session: SpdySession,
  ) {}

  /** Sends data; false when the connection's buffer is full (wait for the socket's 'drain'). */
  write(data: Buffer): boolean {
    return this.session.writeData(this.id, data, false);
  }

  /** Half-closes the stream: an empty data frame with FLAG_FIN. */
  end(): void {
    this.session.writeData(this.id, Buffer.alloc(0), true);
  }

  reset(status: number = RST_STATUS.CANCEL): void {
    this.session.resetStream(this.id, status);
  }
}

/**
 * The client side of a SPDY/3.1 session over a connection already upgraded (HTTP 101, `Upgrade: SPDY/3.1`),
 * as Kubernetes' streaming servers speak it (moby/spdystream): the client opens odd-numbered streams with
 * SYN_STREAM and waits for each SYN_REPLY; data flows both ways; RST_STREAM or the connection closing ends
 * a stream. The peer's PINGs are answered, its SETTINGS, HEADERS and WINDOW_UPDATEs read and set aside.
 *
 * Flow control: WINDOW_UPDATEs go out for the data received, but the peer's windows are not enforced on
 * sending — spdystream never sends WINDOW_UPDATE, so a sender that waited on the initial 64 KiB window
 * would stall (spdystream itself does not enforce windows either).
 */
export class SpdySession {
  /** Resolves once the connection is closed and every stream has been told. */
  readonly closed: Promise<void>;
  private resolveClosed!: () => void;
  private readonly reader = new FrameReader();
  private readonly compressor = new HeaderCompressor();
  private readonly decompressor = new HeaderDecompressor();
  private readonly streams = new Map<number, StreamState>();
  private readonly inbox: (Frame | typeof SOCKET_CLOSED)[] = [];
  private processing = false;
  private nextStreamId = 1;
  private goneAway = false;
  private finished = false;
  private unacknowledged = 0;

  constructor(
    readonly socket: Duplex,
    head: Buffer = Buffer.alloc(0),
  ) {
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.enqueue(SOCKET_CLOSED));
    if (head.length) this.receive(head);
    socket.resume();
  }

  /** Opens a stream with these headers and waits for the peer's SYN_REPLY. Handlers see everything after it. */
  async openStream(headers: Record<string, string>, handlers: StreamHandlers = {}, timeoutMs = REPLY_TIMEOUT_MS): Promise<SpdyStream> {
    if (this.goneAway || this.finished || this.socket.destroyed) throw new Error('the SPDY connection is closing');
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    const stream = new SpdyStream(id, this);
    const state: StreamState = { stream, handlers, replied: false, remoteEnded: false, localEnded: false, unacknowledged: 0 };
    this.streams.set(id, state);
    const replied = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply to SPDY stream ${id} within ${timeoutMs} ms`)), timeoutMs);
      state.reply = { resolve, reject, timer };
    });
    // Failures are awaited below; until then (while the headers compress) the rejection must not go unhandled.
    replied.catch(() => undefined);
    try {
      const block = await this.compressor.compress(encodeHeaderBlock(headers));
      this.write(controlFrame(FRAME_TYPE.SYN_STREAM, 0, synStreamPayload(id, block)));
      await replied;
    } catch (err) {
      if (this.streams.delete(id)) this.write(controlFrame(FRAME_TYPE.RST_STREAM, 0, streamValuePayload(id, RST_STATUS.CANCEL)));
      throw err;
    } finally {
      clearTimeout(state.reply!.timer);
      state.reply = undefined;
    }
    return stream;
  }

  /** Ends the session politely: GOAWAY, then the end of the connection. */
  close(): void {
    if (this.socket.destroyed || this.goneAway) return;
    this.goneAway = true;
    this.write(controlFrame(FRAME_TYPE.GOAWAY, 0, streamValuePayload(0, GOAWAY_STATUS.OK)));
    this.socket.end();
  }

  writeData(id: number, data: Buffer, fin: boolean): boolean {
    const state = this.streams.get(id);
    if (!state || state.localEnded) return true;
    let flushed = true;
    for (let offset = 0; offset < data.length; offset += MAX_DATA_FRAME) {
      const last = offset + MAX_DATA_FRAME >= data.length;
      flushed = this.write(dataFrame(id, fin && last ? FLAG_FIN : 0, data.subarray(offset, offset + MAX_DATA_FRAME)));
    }
    if (fin) {
      if (data.length === 0) flushed = this.write(dataFrame(id, FLAG_FIN, data));
      state.localEnded = true;
      this.forgetIfDone(state);
    }
    return flushed;
  }

  resetStream(id: number, status: number): void {
    const state = this.streams.get(id);
    if (!state) return;
    this.write(controlFrame(FRAME_TYPE.RST_STREAM, 0, streamValuePayload(id, status)));
    state.localEnded = true;
    this.endRemote(state, 'reset');
  }

  private write(bytes: Buffer): boolean {
    if (this.socket.destroyed || this.socket.writableEnded) return true;
    return this.socket.write(bytes);
  }

  private receive(chunk: Buffer): void {
    let frames: Frame[];
    try {
      frames = this.reader.push(chunk);
    } catch (err) {
      this.fail(err);
      return;
    }
    for (const frame of frames) this.enqueue(frame);
  }

  /** Frames are handled strictly in order; header blocks are decompressed asynchronously on the way. */
  private enqueue(item: Frame | typeof SOCKET_CLOSED): void {
    this.inbox.push(item);
    if (!this.processing) void this.process();
  }

  private async process(): Promise<void> {
    this.processing = true;
    try {
      while (this.inbox.length) {
        const item = this.inbox.shift()!;
        if (item === SOCKET_CLOSED) {
          this.finish();
          continue;
        }
        if (this.finished) continue;
        if (item.control) await this.handleControl(item);
        else this.handleData(item);
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.processing = false;
    }
  }

  private handleData(frame: DataFrame): void {
    const state = this.streams.get(frame.streamId);
    if (!state || state.remoteEnded || !state.replied) return;
    if (frame.payload.length) {
      state.handlers.data?.(frame.payload);
      this.acknowledge(state, frame.payload.length);
    }
    if (frame.flags & FLAG_FIN) this.endRemote(state, 'fin');
  }

  private async handleControl(frame: ControlFrame): Promise<void> {
    if (frame.version !== SPDY_VERSION) throw new SpdyProtocolError(`unsupported SPDY version ${frame.version}`);
    switch (frame.type) {
      case FRAME_TYPE.SYN_STREAM: {
        // The streaming servers never open streams; refuse any, after reading its headers to keep the
        // decompressor in step.
        const { streamId, headerBlock } = parseSynStream(frame.payload);
        await this.decompressor.decompress(headerBlock);
        this.write(controlFrame(FRAME_TYPE.RST_STREAM, 0, streamValuePayload(streamId, RST_STATUS.REFUSED_STREAM)));
        return;
      }
      case FRAME_TYPE.SYN_REPLY: {
        const { streamId, headerBlock } = parseStreamHeaders(frame.payload);
        decodeHeaderBlock(await this.decompressor.decompress(headerBlock));
        const state = this.streams.get(streamId);
        if (!state || state.replied) return;
        state.replied = true;
        state.reply?.resolve();
        if (frame.flags & FLAG_FIN) this.endRemote(state, 'fin');
        return;
      }
      case FRAME_TYPE.HEADERS: {
        const { streamId, headerBlock } = parseStreamHeaders(frame.payload);
        decodeHeaderBlock(await this.decompressor.decompress(headerBlock));
        const state = this.streams.get(streamId);
        if (state && frame.flags & FLAG_FIN) this.endRemote(state, 'fin');
        return;
      }
      case FRAME_TYPE.RST_STREAM: {
        const { streamId, value } = parseStreamValue(frame.payload);
        const state = this.streams.get(streamId);
        if (!state) return;
        state.reply?.reject(new Error(`the peer reset SPDY stream ${streamId} (status ${value})`));
        state.localEnded = true;
        this.endRemote(state, 'reset');
        return;
      }
      case FRAME_TYPE.PING: {
        // Our PINGs would carry odd ids; an even id is the peer's, to be echoed.
        const id = parsePing(frame.payload);
        if (id % 2 === 0) this.write(controlFrame(FRAME_TYPE.PING, 0, pingPayload(id)));
        return;
      }
      case FRAME_TYPE.GOAWAY: {
        const { streamId: lastGood } = parseStreamValue(frame.payload);
        this.goneAway = true;
        for (const state of this.streams.values()) {
          if (state.stream.id > lastGood) state.reply?.reject(new Error(`the peer went away before SPDY stream ${state.stream.id} was accepted`));
        }
        return;
      }
      default:
        // SETTINGS and WINDOW_UPDATE need no answer from a sender that does not enforce windows; unknown
        // control frames are ignored, as the protocol asks.
        return;
    }
  }

  private acknowledge(state: StreamState, bytes: number): void {
    state.unacknowledged += bytes;
    this.unacknowledged += bytes;
    if (state.unacknowledged >= WINDOW_UPDATE_THRESHOLD && !state.remoteEnded) {
      this.write(controlFrame(FRAME_TYPE.WINDOW_UPDATE, 0, streamValuePayload(state.stream.id, state.unacknowledged)));
      state.unacknowledged = 0;
    }
    if (this.unacknowledged >= WINDOW_UPDATE_THRESHOLD) {
      this.write(controlFrame(FRAME_TYPE.WINDOW_UPDATE, 0, streamValuePayload(0, this.unacknowledged)));
      this.unacknowledged = 0;
    }
  }

  private endRemote(state: StreamState, how: StreamEnd): void {
    if (state.remoteEnded) return;
    state.remoteEnded = true;
    state.handlers.end?.(how);
    this.forgetIfDone(state);
  }

  private forgetIfDone(state: StreamState): void {
    if (state.remoteEnded && state.localEnded) this.streams.delete(state.stream.id);
  }

  private fail(err: unknown): void {
    if (this.socket.destroyed) return;
    this.write(controlFrame(FRAME_TYPE.GOAWAY, 0, streamValuePayload(0, GOAWAY_STATUS.PROTOCOL_ERROR)));
    this.socket.destroy(err instanceof Error ? err : new Error(String(err)));
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    for (const state of this.streams.values()) {
      state.reply?.reject(new Error('the SPDY connection closed'));
      this.endRemote(state, 'closed');
    }
    this.streams.clear();
    this.compressor.close();
    this.decompressor.close();
    this.resolveClosed();
  }
}
