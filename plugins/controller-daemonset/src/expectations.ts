/** After this long, expectations are given up on: a lost watch event must not stall a DaemonSet forever. */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

interface Expectation {
  pendingCreations: number;
  /** Keys of pods whose deletion has not yet been seen. */
  pendingDeletions: Set<string>;
  setAt: number;
}

/**
 * What a DaemonSet is waiting to see in its pod informer after creating or deleting pods: until its own
 * writes show up, the cache is stale, and acting on it would create a second pod on a node or delete
 * one twice. Keyed by DaemonSet key (`namespace/name`).
 */
export class Expectations {
  private readonly byController = new Map<string, Expectation>();

  constructor(private readonly now: () => number = Date.now) {}

  /** True when nothing is awaited (or the wait timed out): the cache can be trusted. */
  satisfied(controllerKey: string): boolean {
    const expectation = this.byController.get(controllerKey);
    if (!expectation) return true;
    if (expectation.pendingCreations <= 0 && expectation.pendingDeletions.size === 0) return true;
    return this.now() - expectation.setAt >= EXPECTATIONS_TIMEOUT_MS;
  }

  /** Sets what the next pass waits for; called before the first request, as a watch event may beat its response. */
  expect(controllerKey: string, creations: number, deletions: readonly string[]): void {
    this.byController.set(controllerKey, { pendingCreations: creations, pendingDeletions: new Set(deletions), setAt: this.now() });
  }

  /** A pod of this DaemonSet appeared (or a creation will never happen). */
  creationObserved(controllerKey: string): void {
    const expectation = this.byController.get(controllerKey);
    if (expectation) expectation.pendingCreations -= 1;
  }

  /** A pod of this DaemonSet went away or started terminating (or its deletion failed). */
  deletionObserved(controllerKey: string, podKey: string): void {
    this.byController.get(controllerKey)?.pendingDeletions.delete(podKey);
  }

  forget(controllerKey: string): void {
    this.byController.delete(controllerKey);
  }
}
