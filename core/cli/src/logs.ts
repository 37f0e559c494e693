import { closeSync, fchmodSync, fstatSync, mkdirSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createLogger, type Logger } from '@skiff/kernel';

/** Where a cluster's component logs go unless a flag brings them to stderr: `<data dir>/logs/skiff.log`. */
export function logFileOf(dataDir: string): string {
  return join(dataDir, 'logs', 'skiff.log');
}

/** The log file is renamed to `<file>.1` (replacing the one before) once it reaches this size. */
export const LOG_FILE_LIMIT = 10 * 1024 * 1024;

export const LOG_FORMATS = ['json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Where a command's component logs go: a file (JSON lines) or stderr (JSON lines or text). */
export type LogTarget = { to: 'file'; file: string } | { to: 'stderr'; format: LogFormat };

/**
 * How a command chose where its logs go. `skiff up` writes them to the log file unless `--log-level` or `--log-format`
 * asks for them on stderr; the other commands keep them on stderr.
 */
export interface LogChoice {
  toFile: boolean;
  format?: LogFormat;
}

export function logTarget(choice: LogChoice, dataDir: string): LogTarget {
  return choice.toFile ? { to: 'file', file: logFileOf(dataDir) } : { to: 'stderr', format: choice.format ?? 'json' };
}

/** What a line is written to: the log file or stderr, synchronously (a log line is never lost to an exit). */
export interface LineSink {
  write(line: string): void;
}

/**
 * An append-only log file, mode 0600, that moves itself aside to `<file>.1` once it reaches `limit` bytes. Several
 * writers may share the file (the API server's worker threads): every 64 KiB written, a writer checks the file's real
 * size and whether another writer moved it aside already (then it reopens the new one).
 */
export class RotatingFile implements LineSink {
  private fd: number;
  private unchecked = 0;

  constructor(
    readonly file: string,
    private readonly limit = LOG_FILE_LIMIT,
    private readonly checkEvery = 64 * 1024,
  ) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    this.fd = this.open();
  }

  write(line: string): void {
    const bytes = Buffer.byteLength(line);
    this.unchecked += bytes;
    if (this.unchecked >= Math.min(this.checkEvery, this.limit)) this.check(bytes);
    writeSync(this.fd, line);
  }

  close(): void {
    closeSync(this.fd);
  }

  private open(): number {
    const fd = openSync(this.file, 'a', 0o600);
    fchmodSync(fd, 0o600);
    return fd;
  }

  /** Before writing `next` bytes: reopen when another writer moved the file aside, move it aside when it is full. */
  private check(next: number): void {
    this.unchecked = 0;
    const own = fstatSync(this.fd);
    let current: number | undefined;
    try {
      current = statSync(this.file).ino;
    } catch {
      current = undefined;
    }
    if (current !== own.ino) return this.reopen();
    if (own.size + next <= this.limit) return;
    renameSync(this.file, `${this.file}.1`);
    this.reopen();
  }

  private reopen(): void {
    closeSync(this.fd);
    this.fd = this.open();
  }
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields every line has, or that the text format shows in front of the message. */
const SHOWN_FIRST = new Set(['level', 'time', 'msg', 'component', 'node']);

function textValue(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

/**
 * One pino JSON line as a line for people: `12:04:05.123 INFO  apiserver node-1: message key=value …`; an error's
 * stack follows on its own lines. A line that is not JSON passes unchanged.
 */
export function formatLogLine(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const time = typeof record.time === 'number' ? new Date(record.time).toISOString().slice(11, 23) : '';
  const level = (LEVEL_NAMES[record.level as number] ?? String(record.level)).padEnd(5);
  const where = [record.component, record.node].filter((part) => typeof part === 'string').join(' ');
  const fields = Object.entries(record)
    .filter(([key]) => !SHOWN_FIRST.has(key))
    .map(([key, value]) =>
      key === 'err' && typeof value === 'object' && value !== null
        ? `err=${textValue((value as { message?: unknown }).message)}`
        : `${key}=${textValue(value)}`,
    );
  const stack = (record.err as { stack?: unknown } | undefined)?.stack;
  const head = [time, level, where ? `${where}:` : '', typeof record.msg === 'string' ? record.msg : '', ...fields].filter(Boolean).join(' ');
  return `${head}\n${typeof stack === 'string' ? `${stack.replace(/^/gm, '    ')}\n` : ''}`;
}

/** Stderr, synchronously. */
export const STDERR: LineSink = { write: (line) => void writeSync(2, line) };

/** A sink for JSON lines that writes them to `sink` in `format`. */
export function formatted(format: LogFormat, sink: LineSink = STDERR): LineSink {
  return format === 'json' ? sink : { write: (line) => sink.write(formatLogLine(line)) };
}

/** A record a logger was given, with the bindings of its children: what `skiff up` watches its start through. */
export interface ObservedRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

/**
 * A Logger that hands every info, warn and error record to `observer.onRecord` while one is set, whatever the log
 * level lets through to the log itself, and passes the record on to `inner`. `skiff up` shows a node's start from the
 * records its runtime and kubelet write, then unsets the observer.
 */
export function observedLogger(inner: Logger, observer: { onRecord?: (record: ObservedRecord) => void }, bindings: Record<string, unknown> = {}): Logger {
  const log =
    (level: ObservedRecord['level']) =>
    (obj: object | string, msg?: string): void => {
      const onRecord = observer.onRecord;
      if (onRecord && level !== 'debug') {
        const record =
          typeof obj === 'string' ? { level, fields: bindings, message: obj } : { level, fields: { ...{}, ...bindings, ...obj }, message: msg ?? '' };
        onRecord(record);
      }
      inner[level](obj, msg);
    };
  return {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: (more) => observedLogger(inner.child(more), observer, { ...{}, ...bindings, ...more }),
  };
}

/** A logger at `level` to `target`; for a file, the file too (to close, and to name to the user). */
export function targetLogger(level: string, target: LogTarget): { logger: Logger; file?: RotatingFile } {
  if (target.to === 'stderr') return { logger: createLogger(level, formatted(target.format)) };
  const file = new RotatingFile(target.file);
  return { logger: createLogger(level, file), file };
}
