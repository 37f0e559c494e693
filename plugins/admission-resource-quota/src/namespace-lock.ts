/**
 * One turn at a time per namespace: charges to a namespace's quotas and every other write to its
 * ResourceQuotas take turns, so no two of them read the same usage and both add to it.
 */
export class NamespaceLocks {
  private readonly tails = new Map<string, Promise<void>>();

  /** Waits for the namespace's turn; the returned function ends it (calling it again does nothing). */
  async acquire(namespace: string): Promise<() => void> {
    const previous = this.tails.get(namespace) ?? Promise.resolve();
    let end!: () => void;
    const turn = new Promise<void>((resolve) => (end = resolve));
    const tail = previous.then(() => turn);
    this.tails.set(namespace, tail);
    await previous;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      end();
      if (this.tails.get(namespace) === tail) this.tails.delete(namespace);
    };
  }

  async run<T>(namespace: string, work: () => Promise<T>): Promise<T> {
    const release = await this.acquire(namespace);
    try {
      return await work();
    } finally {
      release();
    }
  }
}
