import { closeSync, existsSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

export interface LogFileOptions {
  path: string;
  /** Rotate once the file reaches this many bytes; 0: never. */
  maxBytes: number;
  /** Rotated files kept beside the log; older ones are removed. */
  maxBackups: number;
  /** Called once per failure run (the first write that fails); the writer keeps trying later batches. */
  onError(err: unknown): void;
}

/**
 * An append-only JSON-lines file written off the request path: lines queue in memory and go out in one write per
 * event-loop turn. Rotation renames the file to `<name>-<UTC time><ext>` and keeps `maxBackups` of them. The file is
 * created with mode 0600 (audit events name users and objects).
 */
export class LogFile {
  private queue: string[] = [];
  private scheduled = false;
  private fd: number | undefined;
  private size = 0;
  private failing = false;
  private rotations = 0;

  constructor(private readonly options: LogFileOptions) {}

  append(line: string): void {
    this.queue.push(line);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes whatever is queued now (also used at stop). */
  flush(): void {
    this.scheduled = false;
    if (this.queue.length === 0) return;
    const text = this.queue.join('\n') + '\n';
    this.queue = [];
    try {
      this.open();
      const bytes = Buffer.from(text);
      writeSync(this.fd!, bytes);
      this.size += bytes.length;
      this.failing = false;
      if (this.options.maxBytes > 0 && this.size >= this.options.maxBytes) this.rotate();
    } catch (err) {
      if (!this.failing) this.options.onError(err);
      this.failing = true;
    }
  }

  close(): void {
    this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private open(): void {
    if (this.fd !== undefined) return;
    mkdirSync(dirname(this.options.path), { recursive: true });
    this.fd = openSync(this.options.path, 'a', 0o600);
    this.size = existsSync(this.options.path) ? statSync(this.options.path).size : 0;
  }

  private rotate(): void {
    const { path, maxBackups } = this.options;
    closeSync(this.fd!);
    this.fd = undefined;
    const ext = extname(path);
    const stem = basename(path, ext);
    // The time orders the backups; the counter keeps two rotations within one millisecond apart.
    const stamp = `${new Date().toISOString().replace(/[:.]/g, '-')}-${String(++this.rotations).padStart(6, '0')}`;
    renameSync(path, join(dirname(path), `${stem}-${stamp}${ext}`));
    // Only names this writer gives its backups: other files of the folder (`audit-old.log`) are never removed.
    const ours = new RegExp(`^${escapeRegExp(stem)}-\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}-\\d{3}Z-\\d{6}${escapeRegExp(ext)}$`);
    const backups = readdirSync(dirname(path))
      .filter((file) => ours.test(file))
      .sort();
    for (const old of backups.slice(0, Math.max(0, backups.length - maxBackups))) rmSync(join(dirname(path), old), { force: true });
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
