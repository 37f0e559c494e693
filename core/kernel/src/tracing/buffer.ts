import type { Span } from './span.js';

/**
 * A fixed ring of the newest spans: bounded memory however long tracing stays on. Queries scan it (a debug
 * endpoint reads a few times per `skiff trace`, and a scan of 20,000 spans takes about a millisecond).
 */
export class TraceBuffer {
  private readonly ring: (Span | undefined)[];
  private next = 0;
  private count = 0;
  /** Spans overwritten by newer ones since the start. */
  dropped = 0;

  constructor(readonly capacity: number) {
    this.ring = new Array<Span | undefined>(capacity);
  }

  get size(): number {
    return this.count;
  }

  add(span: Span): void {
    if (this.ring[this.next] !== undefined) this.dropped++;
    this.ring[this.next] = span;
    this.next = (this.next + 1) % this.capacity;
    if (this.count < this.capacity) this.count++;
  }

  /** Every held span, oldest first. */
  *spans(): IterableIterator<Span> {
    const start = this.count < this.capacity ? 0 : this.next;
    for (let i = 0; i < this.count; i++) yield this.ring[(start + i) % this.capacity]!;
  }

  /** The spans of the given traces, in start order. */
  ofTraces(traces: ReadonlySet<string>): Span[] {
    const found: Span[] = [];
    for (const span of this.spans()) if (traces.has(span.trace)) found.push(span);
    return found.sort((a, b) => a.start - b.start);
  }

  /**
   * The traces that touched an object (a span whose `uid` attribute is one of `uids`) or, transitively, an object
   * it owns (a span whose `owners` attribute names a collected uid): a Deployment's ReplicaSets and their Pods.
   */
  tracesOfObjects(uids: Iterable<string>): { traces: Set<string>; uids: Set<string> } {
    const collected = new Set(uids);
    const traces = new Set<string>();
    let grew = true;
    while (grew) {
      grew = false;
      for (const span of this.spans()) {
        const uid = span.attrs?.uid;
        if (typeof uid !== 'string') continue;
        const owners = span.attrs?.owners;
        const owned = typeof owners === 'string' && owners.split(',').some((owner) => collected.has(owner));
        if (owned && !collected.has(uid)) {
          collected.add(uid);
          grew = true;
        }
        if (collected.has(uid) && !traces.has(span.trace)) {
          traces.add(span.trace);
        }
      }
    }
    return { traces, uids: collected };
  }
}
