/** After this long, expectations are given up on: a lost watch event must not stall a controller forever. */
export const EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

interface Expectation {
  /** Creations not yet seen in the informer. */
  pendingCreations: number;
  /** Keys of pods whose deletion has not yet been seen. */
  pendingDeletions: Set<string>;
  setAt: number;
}

/**
 * What a controller (a ReplicaSet, a DaemonSet, a Job, …) waits to see in its pod informer after creating
 * or deleting pods. Until its own writes show up there, the informer's view is stale, and acting on it
 * would create or delete pods twice. Keyed by controller key (`namespace/name`).
 */
export class Expectations {
  private readonly byController = new Map<string, Expectation>();

  constructor(private readonly now: () => number = Date.now) {}

  /** True when nothing is awaited (or the wait timed out): the informer's view of the controller's pods can be trusted. */
  satisfied(controllerKey: string): boolean {
    const expectation = this.byController.get(controllerKey);
    if (!expectation) return true;
    if (expectation.pendingCreations <= 0 && expectation.pendingDeletions.size === 0) return true;
    return this.now() - expectation.setAt >= EXPECTATIONS_TIMEOUT_MS;
  }

  /**
   * Sets what the next pass waits for, replacing what was awaited before; call it before the first request,
   * as a watch event may beat its response.
   */
  expect(controllerKey: string, creations: number, deletions: readonly string[]): void {
    this.byController.set(controllerKey, { pendingCreations: creations, pendingDeletions: new Set(deletions), setAt: this.now() });
  }

  /** `expect` with creations only. */
  expectCreations(controllerKey: string, count: number): void {
    this.expect(controllerKey, count, []);
  }

  /** `expect` with deletions only. */
  expectDeletions(controllerKey: string, podKeys: readonly string[]): void {
    this.expect(controllerKey, 0, podKeys);
  }

  /** A pod of this controller appeared (or a creation will never happen). */
  creationObserved(controllerKey: string): void {
    const expectation = this.byController.get(controllerKey);
    if (expectation) expectation.pendingCreations -= 1;
  }

  /** A pod of this controller went away or started terminating (or its deletion failed). */
  deletionObserved(controllerKey: string, podKey: string): void {
    this.byController.get(controllerKey)?.pendingDeletions.delete(podKey);
  }

  /** Drops what was awaited for a controller that is gone. */
  forget(controllerKey: string): void {
    this.byController.delete(controllerKey);
  }
}
