/**
 * At most `size` holders at once: `take()` waits for a free slot, `give()` hands it to the next waiter. For
 * test files whose independent parts run side by side on a small machine, a few at a time.
 */
export class Slots {
  private readonly waiting: (() => void)[] = [];
  constructor(private free: number) {}

  async take(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return;
    }
    await new Promise<void>((resolveTake) => this.waiting.push(resolveTake));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }

  /** Runs `work` in a slot. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.take();
    try {
      return await work();
    } finally {
      this.give();
    }
  }
}
