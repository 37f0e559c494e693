/**
 * The CRI container log format: one entry a line, `<RFC3339Nano timestamp> <stdout|stderr> <tag> <content>`,
 * where the tag's first `:`-separated field is `P` for a partial line (continued by the stream's next entry)
 * or `F` for the end of a line. The runtime writes the file; the kubelet only reads it.
 */

export type LogStream = 'stdout' | 'stderr';

export interface CriLogEntry {
  /** The timestamp, normalised to nine fractional digits (how the kubelet prints it with `timestamps`). */
  timestamp: string;
  /** Milliseconds since the epoch, with the sub-millisecond part as a fraction. */
  time: number;
  stream: LogStream;
  partial: boolean;
  content: Buffer;
}

const TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;
const SPACE = 0x20;

/** An RFC 3339 timestamp with up to nine fractional digits, or undefined when the text is not one. */
export function parseTimestamp(text: string): { timestamp: string; time: number } | undefined {
  const match = TIMESTAMP.exec(text);
  if (!match) return undefined;
  const [, seconds, fraction = '', zone] = match as unknown as [string, string, string | undefined, string];
  const nanos = fraction.padEnd(9, '0');
  const whole = Date.parse(`${seconds}${zone}`);
  if (Number.isNaN(whole)) return undefined;
  return { timestamp: `${seconds}.${nanos}${zone}`, time: whole + Number(nanos) / 1e6 };
}

/** One line of a CRI log file (without its newline), or undefined when it is not a well-formed entry. */
export function parseCriLogLine(line: Buffer): CriLogEntry | undefined {
  const afterTimestamp = line.indexOf(SPACE);
  if (afterTimestamp < 0) return undefined;
  const afterStream = line.indexOf(SPACE, afterTimestamp + 1);
  if (afterStream < 0) return undefined;
  const stream = line.toString('latin1', afterTimestamp + 1, afterStream);
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  const time = parseTimestamp(line.toString('latin1', 0, afterTimestamp));
  if (!time) return undefined;
  // An empty line may be written without the space after its tag.
  let afterTag = line.indexOf(SPACE, afterStream + 1);
  if (afterTag < 0) afterTag = line.length;
  const tag = line.toString('latin1', afterStream + 1, afterTag);
  if (!tag) return undefined;
  return { ...{}, ...time, stream, partial: tag.split(':')[0] === 'P', content: line.subarray(Math.min(afterTag + 1, line.length)) };
}

/**
 * A piece of a container's output: a whole line ending in a newline, or — for a line still open when the
 * log ends, or one too long to hold — the part written so far. `continuation` marks the rest of a line
 * whose first part was handed out before (printed without a timestamp).
 */
export interface LogLine {
  timestamp: string;
  time: number;
  stream: LogStream;
  content: Buffer;
  continuation: boolean;
}

const NEWLINE = Buffer.from('\n');

/** How much of one line is held back waiting for its end before the part so far is handed out. */
export const MAX_HELD_LINE_BYTES = 1024 * 1024;

interface OpenLine {
  timestamp: string;
  time: number;
  parts: Buffer[];
  bytes: number;
  continuation: boolean;
}

/**
 * Joins each stream's partial entries into lines. Streams are joined separately, so a line of stdout
 * written in parts stays whole even when stderr lines come in between; lines come out in the order they end.
 */
export class LogLineAssembler {
  private readonly open = new Map<LogStream, OpenLine>();

  push(entry: CriLogEntry): LogLine | undefined {
    let line = this.open.get(entry.stream);
    if (!line) {
      line = { timestamp: entry.timestamp, time: entry.time, parts: [], bytes: 0, continuation: false };
      this.open.set(entry.stream, line);
    }
    line.parts.push(entry.content);
    line.bytes += entry.content.length;
    if (!entry.partial) {
      this.open.delete(entry.stream);
      return this.lineOf(entry.stream, line, true);
    }
    if (line.bytes < MAX_HELD_LINE_BYTES) return undefined;
    const piece = this.lineOf(entry.stream, line, false);
    this.open.set(entry.stream, { ...{}, ...line, parts: [], bytes: 0, continuation: true });
    return piece;
  }

  /** The lines still open, as far as they go, oldest first; the assembler is empty afterwards. */
  flush(): LogLine[] {
    const pieces = [...this.open].filter(([, line]) => line.bytes > 0).map(([stream, line]) => this.lineOf(stream, line, false));
    this.open.clear();
    return pieces.sort((a, b) => a.time - b.time);
  }

  private lineOf(stream: LogStream, line: OpenLine, complete: boolean): LogLine {
    const content = Buffer.concat(complete ? [...line.parts, NEWLINE] : line.parts);
    return { timestamp: line.timestamp, time: line.time, stream, content, continuation: line.continuation };
  }
}
