/** After this long, expectations are given up on: a lost watch event must not stall a ReplicaSet forever. */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

interface Expectation {
  /** Creations not yet seen in the informer. */
  pendingCreations: number;
  /** Keys of pods whose deletion has not yet been seen. */
  pendingDeletions: Set<string>;
  setAt: number;
}

/**
 * What a ReplicaSet is waiting to see in its pod informer after creating or deleting pods. Until its own
 * writes show up, the informer's view is stale, and acting on it would create or delete pods twice.
 * Keyed by ReplicaSet key (`namespace/name`).
 */
export class Expectations {
  private readonly byController = new Map<string, Expectation>();

  constructor(private readonly now: () => number = Date.now) {}

  /** True when nothing is awaited: the informer's view of this ReplicaSet's pods can be trusted. */
  satisfied(controllerKey: string): boolean {
    const expectation = this.byController.get(controllerKey);
    if (!expectation) return true;
    if (expectation.pendingCreations <= 0 && expectation.pendingDeletions.size === 0) return true;
    return this.now() - expectation.setAt >= EXPECTATIONS_TIMEOUT_MS;
  }

  expectCreations(controllerKey: string, count: number): void {
    this.byController.set(controllerKey, { pendingCreations: count, pendingDeletions: new Set(), setAt: this.now() });
  }

  expectDeletions(controllerKey: string, podKeys: readonly string[]): void {
    this.byController.set(controllerKey, { pendingCreations: 0, pendingDeletions: new Set(podKeys), setAt: this.now() });
  }

  /** A pod of this ReplicaSet appeared (or a creation will never happen). */
  creationObserved(controllerKey: string): void {
    const expectation = this.byController.get(controllerKey);
    if (expectation) expectation.pendingCreations -= 1;
  }

  /** A pod of this ReplicaSet went away or started terminating (or its deletion failed). */
  deletionObserved(controllerKey: string, podKey: string): void {
    this.byController.get(controllerKey)?.pendingDeletions.delete(podKey);
  }

  forget(controllerKey: string): void {
    this.byController.delete(controllerKey);
  }
}
