export const FAILED_POD_BACKOFF_INITIAL_MS = 1000;
export const FAILED_POD_BACKOFF_MAX_MS = 15 * 60_000;

interface Entry {
  delayMs: number;
  lastUpdate: number;
}

/**
 * Exponential backoff per key (a DaemonSet's node): a node whose daemon pods keep failing gets its
 * replacement after 1 s, 2 s, 4 s … up to 15 minutes, so the controller does not fight a kubelet that
 * rejects the pod. An entry left alone for twice the maximum starts over.
 */
export class Backoff {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly initialMs = FAILED_POD_BACKOFF_INITIAL_MS,
    private readonly maxMs = FAILED_POD_BACKOFF_MAX_MS,
  ) {}

  /** How long `key` must still wait, or 0 when it may act now. */
  remaining(key: string): number {
    const entry = this.entries.get(key);
    if (!entry) return 0;
    return Math.max(0, entry.lastUpdate + entry.delayMs - this.now());
  }

  /** Records an action on `key` and lengthens its next wait. */
  next(key: string): void {
    const now = this.now();
    const entry = this.entries.get(key);
    if (!entry || now - entry.lastUpdate > 2 * this.maxMs) this.entries.set(key, { delayMs: this.initialMs, lastUpdate: now });
    else this.entries.set(key, { delayMs: Math.min(entry.delayMs * 2, this.maxMs), lastUpdate: now });
  }

  /** Drops entries that have been idle long enough to start over anyway. */
  prune(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (now - entry.lastUpdate > 2 * this.maxMs) this.entries.delete(key);
  }
}
