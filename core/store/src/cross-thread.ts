/** Atomics.waitAsync (Node 16+; TypeScript's lib has it from es2024 on). */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(array: BigInt64Array, index: number, value: bigint, timeoutMs: number): { async: boolean; value: Promise<string> | string };
  }
).waitAsync;

/**
 * The newest revision any thread of a store has committed, in memory all the threads share: a writer announces its
 * commit here, and every other thread wakes up to read the new entries of the event log (Atomics.waitAsync costs no
 * event-loop turn while nothing happens, and holds no reference that keeps a thread alive).
 */
export class CommitAnnouncements {
  private readonly cell: BigInt64Array;

  constructor(buffer: SharedArrayBuffer) {
    this.cell = new BigInt64Array(buffer, 0, 1);
  }

  /** The newest revision announced by any thread. */
  latest(): number {
    return Number(Atomics.load(this.cell, 0));
  }

  /** Records that `revision` is committed (the announced revision only ever grows) and wakes every follower. */
  announce(revision: number): void {
    const next = BigInt(revision);
    for (let seen = Atomics.load(this.cell, 0); seen < next; ) {
      const found = Atomics.compareExchange(this.cell, 0, seen, next);
      if (found === seen) break;
      seen = found;
    }
    Atomics.notify(this.cell, 0);
  }

  /**
   * Calls `onAnnounced` after each announcement (several may come as one call), and every `pollMs` in any case; until
   * the returned function is called.
   */
  follow(onAnnounced: () => void, pollMs: number): () => void {
    let following = true;
    const loop = async (): Promise<void> => {
      let seen = Atomics.load(this.cell, 0);
      while (following) {
        const waited = waitAsync(this.cell, 0, seen, pollMs);
        if (waited.async) await waited.value;
        if (!following) return;
        seen = Atomics.load(this.cell, 0);
        onAnnounced();
      }
    };
    void loop();
    return () => {
      following = false;
    };
  }
}
