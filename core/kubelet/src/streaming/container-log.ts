import { open, stat, type FileHandle } from 'node:fs/promises';
import type { ContainerLogOptions } from '@skiff/kernel';
import { LogLineAssembler, parseCriLogLine, type CriLogEntry, type LogLine } from './cri-log.js';
import { LogFileReader, tailEntries } from './log-file.js';
import { LogWaker } from './log-waker.js';
import { hasErrnoCode } from '../errors.js';

/** The container whose log is read: where the runtime writes it, and whether it has ended. */
export interface ContainerLogSource {
  path: string;
  /** True once the container has exited (or is gone): nothing more will be written. */
  exited(): Promise<boolean>;
}

export interface FollowTiming {
  /** How long a follower waits for a file-system event before it looks at the file anyway. */
  pollMs: number;
  /** How often a follower asks the runtime whether the container has exited. */
  statusMs: number;
}

export const DEFAULT_FOLLOW_TIMING: FollowTiming = Object.freeze({ pollMs: 250, statusMs: 1000 });

/** The earliest timestamp a line may have: the later of sinceSeconds (from now) and sinceTime, as Kubernetes has it. */
export function sinceOf(options: Pick<ContainerLogOptions, 'sinceSeconds' | 'sinceTime'>, now: number): number | undefined {
  let since = options.sinceSeconds === undefined ? undefined : now - options.sinceSeconds * 1000;
  const time = options.sinceTime === undefined ? NaN : Date.parse(options.sinceTime);
  if (!Number.isNaN(time) && (since === undefined || time > since)) since = time;
  return since;
}

/** Turns lines into the bytes a client sees: since filter, timestamp prefixes, and the byte limit. */
class LogFormatter {
  private written = 0;

  constructor(
    private readonly since: number | undefined,
    private readonly timestamps: boolean,
    private readonly limitBytes: number | undefined,
  ) {}

  get exhausted(): boolean {
    return this.limitBytes !== undefined && this.written >= this.limitBytes;
  }

  format(lines: LogLine[]): Buffer | undefined {
    const pieces: Buffer[] = [];
    for (const line of lines) {
      if (this.exhausted) break;
      if (this.since !== undefined && line.time < this.since) continue;
      let piece = this.timestamps && !line.continuation ? Buffer.concat([Buffer.from(`${line.timestamp} `), line.content]) : line.content;
      if (this.limitBytes !== undefined) piece = piece.subarray(0, this.limitBytes - this.written);
      pieces.push(piece);
      this.written += piece.length;
    }
    return pieces.length ? Buffer.concat(pieces) : undefined;
  }
}

interface OpenLog {
  handle: FileHandle;
  reader: LogFileReader;
  ino: number;
  dev: number;
}

async function openLog(path: string): Promise<OpenLog | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if (hasErrnoCode(err, 'ENOENT')) return undefined;
    throw err;
  }
  const { ino, dev } = await handle.stat();
  return { handle, reader: new LogFileReader(handle, 0), ino, dev };
}

/** What happened to the path since the open file was opened. */
async function changeOf(path: string, file: OpenLog | undefined): Promise<'none' | 'appeared' | 'replaced' | 'truncated'> {
  let current;
  try {
    current = await stat(path);
  } catch (err) {
    // Renamed away by a rotation and not created again yet: keep reading the old file meanwhile.
    if (hasErrnoCode(err, 'ENOENT')) return 'none';
    throw err;
  }
  if (!file) return 'appeared';
  if (current.ino !== file.ino || current.dev !== file.dev) return 'replaced';
  return current.size < file.reader.offset ? 'truncated' : 'none';
}

/**
 * A container's output from its CRI log file, as `kubectl logs` shows it: the lines of both streams in the
 * order they were written, partial entries joined, filtered and limited by the options. With `follow` it
 * keeps reading as the file grows, reopens it when the runtime replaces it (a rotation) or starts over when
 * it is truncated, and ends once the container has exited and the file is read to its end, or on abort.
 */
export async function* readContainerLog(
  source: ContainerLogSource,
  options: ContainerLogOptions,
  signal: AbortSignal,
  timing: FollowTiming = DEFAULT_FOLLOW_TIMING,
  now = Date.now(),
): AsyncGenerator<Uint8Array> {
  const formatter = new LogFormatter(sinceOf(options, now), options.timestamps ?? false, options.limitBytes);
  const assembler = new LogLineAssembler();
  const assemble = (entries: Iterable<CriLogEntry>): LogLine[] => {
    const lines: LogLine[] = [];
    for (const entry of entries) {
      const line = assembler.push(entry);
      if (line) lines.push(line);
    }
    return lines;
  };
  async function* drain(file: OpenLog): AsyncGenerator<Buffer> {
    for await (const raw of file.reader.lines()) {
      const out = formatter.format(assemble(parsed(raw)));
      if (out) yield out;
      if (formatter.exhausted || signal.aborted) return;
    }
  }

  let file = await openLog(source.path);
  const waker = options.follow ? new LogWaker(source.path, timing.pollMs, signal) : undefined;
  try {
    if (file && options.tailLines !== undefined) {
      const { entries, end } = await tailEntries(file.handle, options.tailLines);
      file.reader.offset = end;
      const out = formatter.format(assemble(entries));
      if (out) yield out;
    }
    let exited = false;
    let statusAskedAt = -Infinity;
    for (;;) {
      if (formatter.exhausted || signal.aborted) return;
      if (file) yield* drain(file);
      if (!waker || formatter.exhausted || signal.aborted) break;
      const change = await changeOf(source.path, file);
      if (change === 'replaced' && file) {
        // What the runtime wrote to the old file before it let go of it comes first.
        yield* drain(file);
        await file.handle.close();
        file = await openLog(source.path);
        continue;
      }
      if (change === 'appeared') {
        file = await openLog(source.path);
        continue;
      }
      if (change === 'truncated' && file) {
        file.reader = new LogFileReader(file.handle, 0);
        continue;
      }
      // The file was read to its end after the exit was seen: it is complete.
      if (exited) break;
      if (Date.now() - statusAskedAt >= timing.statusMs) {
        statusAskedAt = Date.now();
        if (await source.exited()) {
          exited = true;
          continue;
        }
      }
      await waker.wait();
    }
    if (signal.aborted) return;
    const rest = formatter.format(assembler.flush());
    if (rest) yield rest;
  } finally {
    waker?.close();
    await file?.handle.close();
  }
}

function* parsed(lines: Buffer[]): Generator<CriLogEntry> {
  for (const line of lines) {
    const entry = parseCriLogLine(line);
    if (entry) yield entry;
  }
}
