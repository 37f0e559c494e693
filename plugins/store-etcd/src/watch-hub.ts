import type { Logger } from '@skiff/kernel';
import { CodedStoreError, type StoreEvent } from '@skiff/store';
import { deepFreeze, type EtcdCodec } from './codec.js';
import type { EtcdClient, WatchEvent } from './etcd-client.js';
import { EtcdWatch } from './etcd-watch.js';

export interface WatchHubOptions {
  client: EtcdClient;
  codec: EtcdCodec;
  /** The hub delivers every event after this revision. */
  startRevision: number;
  /** How many recent events the hub keeps for watches that start a little in the past. */
  bufferSize: number;
  /** How often the hub asks etcd how far it has delivered (so `revision()` follows writes outside this store's keys). */
  progressIntervalMs: number;
  retryForMs: number;
  logger?: Logger;
  onRevision(revision: number): void;
  onCompacted(revision: number): void;
}

/**
 * One watcher's queue. Events are pushed in revision order; the iterator ends when the signal aborts, the store
 * closes (with the store's error), or the watcher falls so far behind that it is dropped (it then simply ends, and
 * the API server's client watches again from the last revision it saw, as with upstream's watch cache).
 */
class Subscription {
  readonly queue: StoreEvent[] = [];
  private wake: (() => void) | undefined;
  done = false;
  error: Error | undefined;

  constructor(
    readonly prefix: string,
    public after: number,
    private readonly limit: number,
  ) {}

  push(event: StoreEvent): void {
    if (this.done || event.revision <= this.after || !event.key.startsWith(this.prefix)) return;
    this.after = event.revision;
    if (this.queue.length >= this.limit) {
      this.end();
      return;
    }
    this.queue.push(event);
    this.notify();
  }

  end(error?: Error): void {
    if (this.done) return;
    this.done = true;
    this.error = error;
    this.notify();
  }

  notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *events(signal: AbortSignal, onEnd: () => void): AsyncGenerator<StoreEvent> {
    const abort = () => this.end();
    signal.addEventListener('abort', abort, { once: true });
    try {
      for (;;) {
        if (signal.aborted) return;
        const event = this.queue.shift();
        if (event) {
          yield event;
          continue;
        }
        if (this.done) {
          if (this.error) throw this.error;
          return;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      signal.removeEventListener('abort', abort);
      this.done = true;
      onEnd();
    }
  }
}

/**
 * Serves every watch of a store from one etcd watch of its whole key prefix: each event is decoded once and handed
 * to the watchers whose prefix it falls under, and the most recent `bufferSize` events are kept, so a watch that
 * starts a little in the past (after a list) needs no etcd watch of its own. A watch from further back gets its own
 * etcd watch, which answers 'Compacted' when etcd no longer holds the revision.
 */
export class WatchHub {
  private readonly buffer: StoreEvent[] = [];
  /** The hub holds every event after `base` (those still in `buffer`). */
  private base: number;
  private delivered: number;
  private readonly live = new Set<Subscription>();
  private readonly dedicated = new Set<EtcdWatch>();
  private etcdWatch: EtcdWatch | undefined;
  private progressTimer: NodeJS.Timeout | undefined;
  private closedWith: Error | undefined;

  constructor(private readonly options: WatchHubOptions) {
    this.base = options.startRevision;
    this.delivered = options.startRevision;
  }

  async start(): Promise<void> {
    await this.open(this.delivered);
    this.progressTimer = setInterval(() => this.etcdWatch?.requestProgress(), this.options.progressIntervalMs);
    this.progressTimer.unref();
  }

  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<StoreEvent> {
    if (this.closedWith) throw this.closedWith;
    const subscription = new Subscription(prefix, fromRevision, Math.max(this.options.bufferSize, 1000));
    if (fromRevision >= this.base) {
      for (const event of this.buffer) if (event.revision > fromRevision) subscription.push(event);
      this.live.add(subscription);
      return subscription.events(signal, () => this.live.delete(subscription));
    }
    return this.fromEtcd(subscription, signal);
  }

  /** Events before the hub's memory: an etcd watch of this prefix from `fromRevision`. */
  private async *fromEtcd(subscription: Subscription, signal: AbortSignal): AsyncGenerator<StoreEvent> {
    const { codec } = this.options;
    const watch = new EtcdWatch(
      this.options.client,
      {
        key: codec.key(subscription.prefix),
        rangeEnd: codec.rangeEnd(subscription.prefix),
        afterRevision: subscription.after,
        retryForMs: this.options.retryForMs,
      },
      {
        events: (events) => {
          for (const event of this.translate(events)) subscription.push(event);
        },
        progress: () => undefined,
        compacted: (revision) => {
          this.options.onCompacted(revision - 1);
          subscription.end(new CodedStoreError('SKIFF_ERR_STORE_COMPACTED', { revision: subscription.after, compacted: revision - 1 }));
        },
        failed: (err) => subscription.end(err),
      },
    );
    this.dedicated.add(watch);
    try {
      await watch.start().catch((err: unknown) => subscription.end(err as Error));
      yield* subscription.events(signal, () => undefined);
    } finally {
      watch.stop();
      this.dedicated.delete(watch);
    }
  }

  /** etcd compacted up to `revision`: buffered events stay valid (they are already decoded). */
  compacted(_revision: number): void {}

  close(error: Error): void {
    this.closedWith = error;
    clearInterval(this.progressTimer);
    this.etcdWatch?.stop();
    for (const watch of this.dedicated) watch.stop();
    for (const subscription of this.live) subscription.end(error);
    this.live.clear();
  }

  private async open(after: number): Promise<void> {
    const { codec } = this.options;
    this.etcdWatch = new EtcdWatch(
      this.options.client,
      { key: codec.key('/'), rangeEnd: codec.rangeEnd('/'), afterRevision: after, retryForMs: this.options.retryForMs, logger: this.options.logger },
      {
        events: (events, headerRevision) => this.deliver(events, headerRevision),
        progress: (revision) => this.options.onRevision(revision),
        compacted: (revision) => this.lost(revision),
        failed: (err) => this.lost(undefined, err),
      },
    );
    await this.etcdWatch.start();
  }

  private deliver(events: WatchEvent[], headerRevision: number): void {
    for (const event of this.translate(events)) {
      this.buffer.push(event);
      this.delivered = event.revision;
      for (const subscription of this.live) subscription.push(event);
    }
    this.trim();
    this.options.onRevision(Math.max(this.delivered, headerRevision));
  }

  /** Keeps at most bufferSize events, dropping whole revisions from the front. */
  private trim(): void {
    const excess = this.buffer.length - this.options.bufferSize;
    if (excess <= 0) return;
    let cut = excess;
    const lastDropped = this.buffer[cut - 1]!.revision;
    while (cut < this.buffer.length && this.buffer[cut]!.revision === lastDropped) cut++;
    this.buffer.splice(0, cut);
    this.base = lastDropped;
  }

  /**
   * The hub's etcd watch ended for good (compacted while the hub was cut off from every member, or no member for
   * longer than the retry time): every live watcher ends with 'Compacted' so its client lists again, and the hub starts
   * over from etcd's current revision.
   */
  private lost(compactRevision: number | undefined, err?: Error): void {
    if (this.closedWith) return;
    this.options.logger?.warn({ compactRevision, err: err?.message }, 'the etcd watch of the store ended; watchers start over');
    const compacted = compactRevision !== undefined ? compactRevision - 1 : this.delivered;
    this.options.onCompacted(compacted);
    for (const subscription of this.live) subscription.end(new CodedStoreError('SKIFF_ERR_STORE_COMPACTED', { revision: subscription.after, compacted }));
    this.live.clear();
    this.buffer.length = 0;
    const restart = async (): Promise<void> => {
      if (this.closedWith) return;
      try {
        const { header } = await this.options.client.range({ key: this.options.codec.key('/'), range_end: this.options.codec.rangeEnd('/'), count_only: true });
        this.base = this.delivered = header.revision;
        this.options.onRevision(header.revision);
        await this.open(header.revision);
      } catch (again) {
        this.options.logger?.warn({ err: (again as Error).message }, 'the etcd watch of the store could not be opened again; retrying');
        setTimeout(() => void restart(), 1000).unref();
      }
    };
    void restart();
  }

  private translate(events: WatchEvent[]): StoreEvent[] {
    const { codec } = this.options;
    const out: StoreEvent[] = [];
    for (const { type, kv, prev_kv } of events) {
      const key = codec.keyOf(kv);
      const revision = kv.mod_revision;
      try {
        if (type === 'DELETE') {
          if (!prev_kv) {
            this.options.logger?.warn({ key, revision }, 'etcd sent a delete without the previous value; the watchers miss it');
            continue;
          }
          const prevObject = codec.decode(key, prev_kv.value, prev_kv.mod_revision);
          const object = codec.decode(key, prev_kv.value, revision);
          out.push(deepFreeze({ type: 'DELETED', key, revision, object, prevObject }));
          continue;
        }
        const eventType = kv.create_revision === revision ? 'ADDED' : 'MODIFIED';
        const object = codec.decode(key, kv.value, revision);
        const event: StoreEvent = prev_kv
          ? { type: eventType, key, revision, object, prevObject: codec.decode(key, prev_kv.value, prev_kv.mod_revision) }
          : { type: eventType, key, revision, object };
        out.push(deepFreeze(event));
      } catch (err) {
        // A value this store cannot read (sealed with a key it lacks, not JSON) reaches no watcher; reads of it fail.
        this.options.logger?.warn({ key, revision, err: (err as Error).message }, 'a watch event could not be decoded; the watchers miss it');
      }
    }
    return out;
  }
}
