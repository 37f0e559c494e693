import type { EndpointSlice } from '@skiff/api';

type Expected = { service: string; generation: number } | { service: string; deleted: true };

/**
 * Remembers the slices this controller wrote or deleted until its informer has seen them, so a sync never
 * plans from a cache that does not show its own last writes yet — that would create a second slice for the
 * same pods, or undo a change. Keyed by slice uid.
 */
export class SliceExpectations {
  private readonly expected = new Map<string, Expected>();

  /** A create or update answered with `slice`: the cache is current once it shows this generation. */
  written(service: string, slice: EndpointSlice): void {
    if (slice.metadata.uid) this.expected.set(slice.metadata.uid, { service, generation: slice.metadata.generation ?? 0 });
  }

  /** A delete was accepted: the cache is current once the slice is gone from it. */
  deleted(service: string, slice: EndpointSlice): void {
    if (slice.metadata.uid) this.expected.set(slice.metadata.uid, { service, deleted: true });
  }

  /** The informer saw `slice` (added or updated). */
  observed(slice: EndpointSlice): void {
    const uid = slice.metadata.uid;
    const expected = uid ? this.expected.get(uid) : undefined;
    if (expected && 'generation' in expected && (slice.metadata.generation ?? 0) >= expected.generation) this.expected.delete(uid!);
  }

  /** The informer saw `slice` go. */
  observedDeletion(slice: EndpointSlice): void {
    if (slice.metadata.uid) this.expected.delete(slice.metadata.uid);
  }

  /** Whether `cached` (the Service's slices in the cache) is missing one of this controller's own writes. */
  stale(service: string, cached: readonly EndpointSlice[]): boolean {
    const byUid = new Map(cached.map((slice) => [slice.metadata.uid, slice]));
    let stale = false;
    for (const [uid, expected] of this.expected) {
      if (expected.service !== service) continue;
      const slice = byUid.get(uid);
      const seen = 'deleted' in expected ? !slice : slice !== undefined && (slice.metadata.generation ?? 0) >= expected.generation;
      if (seen) this.expected.delete(uid);
      else stale = true;
    }
    return stale;
  }

  /** Drops what is expected for a Service that is gone. */
  forget(service: string): void {
    for (const [uid, expected] of this.expected) if (expected.service === service) this.expected.delete(uid);
  }
}
