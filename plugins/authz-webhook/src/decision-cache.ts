interface Entry<T> {
  value: T;
  expiresAt: number;
}

/**
 * Decisions by the full attributes of what was asked, least recently used dropped first beyond `maxEntries`,
 * each kept until the expiry it was stored with. Lookups of a key whose answer is on its way wait for that
 * answer instead of asking again.
 */
export class DecisionCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly pending = new Map<string, Promise<T>>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The cached value for `key`, or `load`'s, stored until `ttlMs(value)` from now (0: not stored). */
  async get(key: string, load: () => Promise<T>, ttlMs: (value: T) => number): Promise<T> {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      if (hit.expiresAt > this.now()) {
        this.entries.set(key, hit);
        return hit.value;
      }
    }
    const running = this.pending.get(key);
    if (running) return running;
    const loading = load().then((value) => {
      const ttl = ttlMs(value);
      if (ttl > 0) {
        this.entries.set(key, { value, expiresAt: this.now() + ttl });
        while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      }
      return value;
    });
    this.pending.set(key, loading);
    try {
      return await loading;
    } finally {
      this.pending.delete(key);
    }
  }
}
