import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * Wakes a log follower when its file may have changed: on a file-system event in the log's folder (the
 * file written, replaced or created), or after `pollMs` at the latest, since watches are not available
 * everywhere (some network and overlay file systems) and can miss a rotation.
 */
export class LogWaker {
  private watcher: FSWatcher | undefined;
  private pending = false;
  private wake: (() => void) | undefined;

  constructor(
    path: string,
    private readonly pollMs: number,
    private readonly signal: AbortSignal,
  ) {
    const name = basename(path);
    try {
      this.watcher = watch(dirname(path), { persistent: false }, (_event, changed) => {
        if (!changed || changed === name) this.notify();
      });
      this.watcher.on('error', () => this.close());
    } catch {
      // The folder may not exist yet, or the platform cannot watch: polling covers it.
      this.watcher = undefined;
    }
  }

  /** Resolves at the next change (at once if one came since the last wait), after pollMs, or on abort. */
  wait(): Promise<void> {
    if (this.pending || this.signal.aborted) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.signal.removeEventListener('abort', done);
        this.wake = undefined;
        this.pending = false;
        resolve();
      };
      const timer = setTimeout(done, this.pollMs);
      this.signal.addEventListener('abort', done, { once: true });
      this.wake = done;
    });
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }

  private notify(): void {
    this.pending = true;
    this.wake?.();
  }
}
