import { createHash } from 'node:crypto';

interface Entry<T> {
  value: T;
  expiresAt: number;
}

/**
 * Outcomes of token verifications, keyed by a hash of the token (the cache holds no credential), each kept until
 * the expiry it was stored with. At `maxEntries` the oldest entry goes. Lookups of the same token while it is
 * being verified share that one verification.
 */
export class TokenCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly pending = new Map<string, Promise<T>>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /**
   * The cached outcome for `token`, or `verify`'s, stored until the time `expiry` gives for it (undefined or a time
   * not in the future: not stored).
   */
  async get(token: string, verify: () => Promise<T>, expiry: (value: T) => number | undefined): Promise<T> {
    const key = createHash('sha256').update(token).digest('base64url');
    const hit = this.entries.get(key);
    if (hit) {
      if (hit.expiresAt > this.now()) return hit.value;
      this.entries.delete(key);
    }
    const running = this.pending.get(key);
    if (running) return running;
    const verification = verify().then((value) => {
      const expiresAt = expiry(value);
      if (expiresAt !== undefined && expiresAt > this.now()) this.store(key, { value, expiresAt });
      return value;
    });
    this.pending.set(key, verification);
    try {
      return await verification;
    } finally {
      this.pending.delete(key);
    }
  }

  clear(): void {
    this.entries.clear();
  }

  private store(key: string, entry: Entry<T>): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
