import type { KubeObject } from '@skiff/api';
import {
  counter,
  currentTrace,
  noteWrite,
  seriesHistogram,
  spanAttribute,
  tracingActive,
  withSpan,
  type Counter,
  type HistogramSeries,
  type LiveSpan,
  type Registry,
  type SeriesHistogram,
} from '@skiff/kernel';
import type { ListOptions, ListResult, Store, StoreEvent, StoredObject } from '@skiff/store';
import { storeType } from '../metrics/labels.js';
import { REQUEST_DURATION_BUCKETS } from '../metrics/request-metrics.js';

type Operation = 'get' | 'listWithCount' | 'create' | 'update' | 'delete';

/**
 * The store as the API server uses it: every call is timed into etcd_request_duration_seconds{operation, type} (the
 * names kube-apiserver reports for its etcd client, whatever store Skiff runs on), and failures are counted in
 * etcd_request_errors_total. One method per store operation; reads of the revision and watches pass through.
 */
export class InstrumentedStore implements Store {
  private readonly duration: SeriesHistogram;
  private readonly errors: Counter<'operation' | 'type'>;
  /** Bound series by operation and type: a store call allocates only its type label. */
  private readonly observers = new Map<string, HistogramSeries>();

  constructor(
    private readonly store: Store,
    registry: Registry,
  ) {
    this.duration = seriesHistogram(registry, {
      name: 'etcd_request_duration_seconds',
      help: 'Seconds a store call took, by operation and key prefix.',
      labelNames: ['operation', 'type'],
      buckets: REQUEST_DURATION_BUCKETS,
    });
    this.errors = counter(registry, {
      name: 'etcd_request_errors_total',
      help: 'Store calls that failed, by operation and key prefix.',
      labelNames: ['operation', 'type'],
    });
  }

  get shared(): boolean | undefined {
    return this.store.shared;
  }

  revision(): number {
    return this.store.revision();
  }

  compactedRevision(): number {
    return this.store.compactedRevision();
  }

  get(key: string): Promise<StoredObject | undefined> {
    if (tracingActive()) return traced('get', key, () => this.timed('get', key, performance.now(), this.store.get(key)));
    return this.timed('get', key, performance.now(), this.store.get(key));
  }

  list(prefix: string, options?: ListOptions): Promise<ListResult> {
    if (tracingActive()) return traced('list', prefix, () => this.timed('listWithCount', prefix, performance.now(), this.store.list(prefix, options)));
    return this.timed('listWithCount', prefix, performance.now(), this.store.list(prefix, options));
  }

  create(key: string, object: KubeObject): Promise<StoredObject> {
    if (tracingActive()) return traced('create', key, () => this.timed('create', key, performance.now(), this.store.create(key, object)));
    return this.timed('create', key, performance.now(), this.store.create(key, object));
  }

  update(key: string, object: KubeObject, options?: { expectedRevision?: number }): Promise<StoredObject> {
    if (tracingActive()) return traced('update', key, () => this.timed('update', key, performance.now(), this.store.update(key, object, options)));
    return this.timed('update', key, performance.now(), this.store.update(key, object, options));
  }

  guaranteedUpdate(key: string, fn: (current: StoredObject | undefined) => KubeObject | undefined): Promise<StoredObject | undefined> {
    if (tracingActive()) return traced('guaranteedUpdate', key, () => this.timed('update', key, performance.now(), this.store.guaranteedUpdate(key, fn)));
    return this.timed('update', key, performance.now(), this.store.guaranteedUpdate(key, fn));
  }

  delete(key: string, options?: { expectedRevision?: number }): Promise<StoredObject> {
    if (tracingActive()) return traced('delete', key, () => this.timed('delete', key, performance.now(), this.store.delete(key, options)));
    return this.timed('delete', key, performance.now(), this.store.delete(key, options));
  }

  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<StoreEvent> {
    return this.store.watch(prefix, fromRevision, signal);
  }

  compact(revision: number): Promise<void> {
    return this.store.compact(revision);
  }

  close(): Promise<void> {
    return this.store.close();
  }

  /** `started` is taken before the call: much of an LMDB read runs before its promise is returned. */
  private async timed<T>(operation: Operation, key: string, started: number, call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (err) {
      this.errors.inc({ operation, type: storeType(key) });
      throw err;
    } finally {
      this.observer(operation, storeType(key)).observe((performance.now() - started) / 1000);
    }
  }

  private observer(operation: Operation, type: string): HistogramSeries {
    const id = operation + type;
    let observer = this.observers.get(id);
    if (!observer) this.observers.set(id, (observer = this.duration.series({ operation, type })));
    return observer;
  }
}

/** A store call as a span of the trace it runs in: the key, and for an object its revision, uid and owners. */
function traced<T>(operation: string, key: string, call: () => Promise<T>): Promise<T> {
  return withSpan({ name: `store ${operation}`, kind: 'store', attrs: { key: spanAttribute(key) } }, async (span) => {
    const ctx = currentTrace();
    if (ctx && operation !== 'get' && operation !== 'list') noteWrite(key, ctx);
    const result = await call();
    if (span) describeStored(span, result);
    return result;
  });
}

function describeStored(span: LiveSpan, result: unknown): void {
  if (typeof result !== 'object' || result === null) return;
  if ('items' in result && Array.isArray(result.items)) {
    span.attrs.items = result.items.length;
    return;
  }
  const stored = result as Partial<StoredObject>;
  if (typeof stored.revision === 'number') span.attrs.revision = stored.revision;
  const metadata = stored.object?.metadata;
  if (!metadata) return;
  if (metadata.uid) span.attrs.uid = metadata.uid;
  const owners = metadata.ownerReferences?.map((owner) => owner.uid).join(',');
  if (owners) span.attrs.owners = owners;
}
