import type { EndpointSlice } from '@skiff/api';

type Expected = { key: string; generation: number } | { key: string; deleted: true };

/**
 * The slices this controller wrote or deleted until its informer shows them, keyed by slice uid: a sync
 * that planned from a cache without its own last writes would mirror the same addresses into a second slice.
 */
export class WrittenSlices {
  private readonly expected = new Map<string, Expected>();

  /** A create or update for Endpoints `key` answered with `slice`. */
  written(key: string, slice: EndpointSlice): void {
    if (slice.metadata.uid) this.expected.set(slice.metadata.uid, { key, generation: slice.metadata.generation ?? 0 });
  }

  /** A delete of `slice` was accepted. */
  deleted(key: string, slice: EndpointSlice): void {
    if (slice.metadata.uid) this.expected.set(slice.metadata.uid, { key, deleted: true });
  }

  /** Whether `cached` (the slices of Endpoints `key` in the cache) misses one of this controller's writes; what it shows is forgotten. */
  stale(key: string, cached: readonly EndpointSlice[]): boolean {
    const byUid = new Map(cached.map((slice) => [slice.metadata.uid, slice]));
    let stale = false;
    for (const [uid, expected] of this.expected) {
      if (expected.key !== key) continue;
      const slice = byUid.get(uid);
      const seen = 'deleted' in expected ? !slice : slice !== undefined && (slice.metadata.generation ?? 0) >= expected.generation;
      if (seen) this.expected.delete(uid);
      else stale = true;
    }
    return stale;
  }

  /** Drops what is expected for Endpoints that are no longer mirrored. */
  forget(key: string): void {
    for (const [uid, expected] of this.expected) if (expected.key === key) this.expected.delete(uid);
  }
}
