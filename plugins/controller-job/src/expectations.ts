/** After this long, expectations are given up on: a lost watch event must not stall a Job forever. */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

interface Expectation {
  pendingCreations: number;
  pendingDeletions: Set<string>;
  setAt: number;
}

/**
 * What a Job waits to see in its pod cache after creating or deleting pods: until its own writes show
 * up there, counting pods again would create or delete some twice. Keyed by Job key.
 */
export class Expectations {
  private readonly byJob = new Map<string, Expectation>();

  constructor(private readonly now: () => number = Date.now) {}

  satisfied(jobKey: string): boolean {
    const expectation = this.byJob.get(jobKey);
    if (!expectation) return true;
    if (expectation.pendingCreations <= 0 && expectation.pendingDeletions.size === 0) return true;
    return this.now() - expectation.setAt >= EXPECTATIONS_TIMEOUT_MS;
  }

  expect(jobKey: string, creations: number, deletions: readonly string[]): void {
    this.byJob.set(jobKey, { pendingCreations: creations, pendingDeletions: new Set(deletions), setAt: this.now() });
  }

  creationObserved(jobKey: string): void {
    const expectation = this.byJob.get(jobKey);
    if (expectation) expectation.pendingCreations -= 1;
  }

  deletionObserved(jobKey: string, podKey: string): void {
    this.byJob.get(jobKey)?.pendingDeletions.delete(podKey);
  }

  forget(jobKey: string): void {
    this.byJob.delete(jobKey);
  }
}
