interface Entry {
  backoffMs: number;
  /** When the back-off last grew (the container was restarted). */
  lastUpdate: number;
}

export interface CrashLoopBackOffOptions {
  initialMs: number;
  maxMs: number;
  now?: () => number;
}

/**
 * Kubernetes' per-container restart back-off: the first restart is immediate, the next waits `initialMs` after
 * the container exited, and each further one twice as long, up to `maxMs`. A container that ran for more than
 * twice `maxMs` before it exited (10 minutes with Kubernetes' 5) starts over from the first.
 */
export class CrashLoopBackOff {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;

  constructor(private readonly options: CrashLoopBackOffOptions) {
    this.now = options.now ?? Date.now;
  }

  /** How much longer a container that exited at `finishedAt` must wait before its restart (0: restart now). */
  remaining(key: string, finishedAt: number): number {
    const entry = this.entries.get(key);
    if (!entry || this.expired(entry, finishedAt)) return 0;
    return Math.max(0, entry.backoffMs - (this.now() - finishedAt));
  }

  /** The back-off the container is in (what the CrashLoopBackOff message says). */
  current(key: string): number {
    return this.entries.get(key)?.backoffMs ?? this.options.initialMs;
  }

  /** Records a restart of a container that exited at `finishedAt`: the next one waits longer. */
  next(key: string, finishedAt: number): void {
    const entry = this.entries.get(key);
    const backoffMs = !entry || this.expired(entry, finishedAt) ? this.options.initialMs : Math.min(entry.backoffMs * 2, this.options.maxMs);
    this.entries.set(key, { backoffMs, lastUpdate: this.now() });
  }

  /** Forgets every container whose key starts with `prefix` (a pod's uid and a slash). */
  forget(prefix: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }

  private expired(entry: Entry, finishedAt: number): boolean {
    return finishedAt - entry.lastUpdate > 2 * this.options.maxMs;
  }
}
