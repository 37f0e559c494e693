import type { FileHandle } from 'node:fs/promises';
import { parseCriLogLine, type CriLogEntry, type LogStream } from './cri-log.js';

/** How much of a log file is read at a time, forwards and backwards. */
export const LOG_CHUNK_BYTES = 64 * 1024;

/** A line longer than this without a newline is not a log entry; it is skipped up to its end. */
const MAX_RAW_LINE_BYTES = 4 * 1024 * 1024;

const NEWLINE = 0x0a;

/**
 * Reads a log file forwards from an offset in whole lines. The bytes after the last newline are an entry
 * the runtime is still writing: they stay unread until their newline arrives, so `offset` is always the
 * start of a line.
 */
export class LogFileReader {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private skipping = false;

  constructor(
    private readonly handle: FileHandle,
    /** Where the next whole line starts. */
    public offset: number,
  ) {}

  /** The whole lines written since the last call, a chunk at a time; ends at the end of the file. */
  async *lines(chunkBytes = LOG_CHUNK_BYTES): AsyncGenerator<Buffer[]> {
    for (;;) {
      const position = this.offset + this.heldBytes;
      const chunk = Buffer.allocUnsafe(chunkBytes);
      const { bytesRead } = await this.handle.read(chunk, 0, chunkBytes, position);
      if (bytesRead === 0) return;
      const lines = this.split(chunk.subarray(0, bytesRead));
      if (lines.length) yield lines;
    }
  }

  private split(chunk: Buffer): Buffer[] {
    const lines: Buffer[] = [];
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end >= 0; end = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, end);
      if (this.skipping) this.skipping = false;
      else lines.push(this.heldBytes ? Buffer.concat([...this.held, piece]) : piece);
      this.offset += this.heldBytes + piece.length + 1;
      this.held = [];
      this.heldBytes = 0;
      start = end + 1;
    }
    if (start < chunk.length) {
      this.held.push(chunk.subarray(start));
      this.heldBytes += chunk.length - start;
      if (this.heldBytes > MAX_RAW_LINE_BYTES) {
        this.offset += this.heldBytes;
        this.held = [];
        this.heldBytes = 0;
        this.skipping = true;
      }
    }
    return lines;
  }
}

type StreamState = 'unseen' | 'collecting' | 'done';

/**
 * Picks the entries of the last `lines` lines while walking a log backwards. A line is its stream's
 * entries up to and including an `F` entry (or up to the end of the log, for a line still open); a stream
 * is done once an earlier line of it begins, and the walk can stop once every stream is done.
 */
class TailSelector {
  private count = 0;
  private readonly states: Record<LogStream, StreamState> = { stdout: 'unseen', stderr: 'unseen' };
  /** Newest first. */
  readonly entries: CriLogEntry[] = [];

  constructor(private readonly lines: number) {
    if (lines <= 0) this.states.stdout = this.states.stderr = 'done';
  }

  get done(): boolean {
    return this.states.stdout === 'done' && this.states.stderr === 'done';
  }

  offer(raw: Buffer): void {
    const entry = parseCriLogLine(raw);
    if (!entry) return;
    const state = this.states[entry.stream];
    if (state === 'done') return;
    // Walking backwards, an F entry (or the first entry of a stream, when it is an open line) starts a line.
    if (!entry.partial || state === 'unseen') {
      if (this.count >= this.lines) {
        this.states[entry.stream] = 'done';
        return;
      }
      this.count += 1;
    }
    this.states[entry.stream] = 'collecting';
    this.entries.push(entry);
    if (this.count >= this.lines) {
      for (const stream of ['stdout', 'stderr'] as const) if (this.states[stream] === 'unseen') this.states[stream] = 'done';
    }
  }
}

/**
 * The entries of the last `lines` lines of a log file, oldest first, read backwards from the end a chunk at
 * a time (a big log costs only the chunks its last lines span), and the offset where whole lines end.
 */
export async function tailEntries(handle: FileHandle, lines: number, chunkBytes = LOG_CHUNK_BYTES): Promise<{ entries: CriLogEntry[]; end: number }> {
  const { size } = await handle.stat();
  const selector = new TailSelector(lines);
  let position = size;
  /** The offset just past the last newline, once found. */
  let end: number | undefined;
  /** The start of a line whose beginning lies before `position`. */
  let carry = Buffer.alloc(0);
  while (position > 0) {
    const length = Math.min(chunkBytes, position);
    position -= length;
    const chunk = Buffer.allocUnsafe(length);
    await readFully(handle, chunk, position);
    let buffer: Buffer;
    if (end === undefined) {
      const last = chunk.lastIndexOf(NEWLINE);
      if (last < 0) continue;
      end = position + last + 1;
      buffer = chunk.subarray(0, last);
      if (selector.done) break;
    } else {
      buffer = carry.length ? Buffer.concat([chunk, carry]) : chunk;
    }
    let lineEnd = buffer.length;
    while (lineEnd > 0 && !selector.done) {
      const newline = buffer.lastIndexOf(NEWLINE, lineEnd - 1);
      if (newline < 0) break;
      selector.offer(buffer.subarray(newline + 1, lineEnd));
      lineEnd = newline;
    }
    if (selector.done) break;
    carry = Buffer.from(buffer.subarray(0, lineEnd));
    if (carry.length > MAX_RAW_LINE_BYTES) carry = Buffer.alloc(0);
  }
  if (position === 0 && !selector.done && carry.length) selector.offer(carry);
  return { entries: selector.entries.reverse(), end: end ?? 0 };
}

async function readFully(handle: FileHandle, buffer: Buffer, position: number): Promise<void> {
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position + filled);
    if (bytesRead === 0) throw new Error(`the log file ended at ${position + filled} bytes while reading it backwards`);
    filled += bytesRead;
  }
}
