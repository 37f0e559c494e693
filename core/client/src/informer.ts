import { ApiError, isStatus, type KubeObject, type ResourceType } from '@skiff/api';
import { runInTrace, traceOfEvent, tracingActive, type ApiClient, type Informer, type InformerHandlers, type Logger, type WatchEvent } from '@skiff/kernel';
import { sleep } from './abortable.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import { IndexedCache, NAMESPACE_INDEX, type Indexer } from './cache.js';
import { objectKey } from './workqueue.js';

/** Which objects an informer mirrors. */
export interface InformerScope {
  namespace?: string;
  fieldSelector?: string;
  labelSelector?: string;
}

export interface InformerSettings {
  /** Re-deliver every cached object as `update(obj, obj)` this often; 0 turns resync off. */
  resyncMs: number;
  logger: Logger;
  /** Delays between failed lists or watches. */
  retry: BackoffOptions;
}

const LIST_PAGE_SIZE = 500;
/** A watch that ends sooner than this without delivering anything counts as a failure (and backs off). */
const MIN_HEALTHY_WATCH_MS = 1_000;

/**
 * A shared cache of one resource type, kept current the way client-go's reflector does: list (paged),
 * replace the cache, then watch from the list's resourceVersion. A watch that ends is resumed from the
 * last resourceVersion seen (events or bookmarks); one that is too old (410) triggers a relist whose
 * differences reach the handlers as add/update/delete.
 */
export class SharedInformer<T extends KubeObject = KubeObject> implements Informer<T> {
  private readonly cache = new IndexedCache<T>();
  private readonly handlers: InformerHandlers<T>[] = [];
  private readonly logger: Logger;
  private resourceVersion = '';
  private synced = false;
  private readonly syncListeners: (() => void)[] = [];
  private running?: Promise<void>;

  constructor(
    private readonly client: ApiClient,
    readonly type: ResourceType,
    private readonly scope: InformerScope,
    private readonly settings: InformerSettings,
  ) {
    this.logger = settings.logger.child({ informer: type.group ? `${type.resource}.${type.group}` : type.resource, ...scope });
  }

  /** Handlers added after the first sync are first told about every cached object, as adds. */
  addHandlers(handlers: InformerHandlers<T>): void {
    this.handlers.push(handlers);
    if (this.synced) for (const object of this.cache.values()) this.call(handlers, 'add', object);
  }

  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(namespace?: string): T[] {
    return namespace === undefined ? [...this.cache.values()] : this.cache.byIndex(NAMESPACE_INDEX, namespace);
  }

  byIndex(index: string, value: string): T[] {
    return this.cache.byIndex(index, value);
  }

  /**
   * Index names are shared by everyone using this informer, so name an index after what it files by
   * (`spec.nodeName`); a second definition under a taken name is ignored. Indexers must be pure and must
   * not throw. Adding an index to a running informer fills it from the cache.
   */
  addIndex(index: string, indexer: Indexer<T>): void {
    if (!this.cache.addIndex(index, indexer)) this.logger.debug({ index }, 'index already defined; keeping the first definition');
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => reject(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncListeners.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /** Starts the list/watch loop (once); the returned promise settles after `signal` aborts and the loop exits. */
  run(signal: AbortSignal): Promise<void> {
    this.running ??= this.loop(signal);
    return this.running;
  }

  private async loop(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff(this.settings.retry);
    const resync = this.settings.resyncMs > 0 ? setInterval(() => this.resync(), this.settings.resyncMs) : undefined;
    let listNeeded = true;
    try {
      while (!signal.aborted) {
        if (listNeeded) {
          try {
            await this.listAndReplace(signal);
            listNeeded = false;
            backoff.reset();
          } catch (err) {
            if (signal.aborted) break;
            this.logger.warn({ err }, 'list failed; retrying');
            await sleep(backoff.next(), signal);
            continue;
          }
        }
        try {
          if (await this.watch(signal)) backoff.reset();
          else await sleep(backoff.next(), signal);
        } catch (err) {
          if (signal.aborted) break;
          if (isExpired(err)) {
            this.logger.info({ resourceVersion: this.resourceVersion }, 'watch resourceVersion expired; relisting');
            listNeeded = true;
          } else {
            this.logger.warn({ err }, 'watch failed; retrying');
            await sleep(backoff.next(), signal);
          }
        }
      }
    } finally {
      clearInterval(resync);
    }
  }

  /** Lists every page at one snapshot, then makes the cache equal to it, telling handlers what changed. */
  private async listAndReplace(signal: AbortSignal): Promise<void> {
    const items: T[] = [];
    let resourceVersion = '';
    let continueToken: string | undefined;
    do {
      const page = await this.client.list<T>(this.type, this.scope.namespace, {
        labelSelector: this.scope.labelSelector,
        fieldSelector: this.scope.fieldSelector,
        limit: LIST_PAGE_SIZE,
        continue: continueToken,
      });
      items.push(...page.items);
      resourceVersion = page.metadata.resourceVersion ?? resourceVersion;
      continueToken = page.metadata.continue || undefined;
    } while (continueToken && !signal.aborted);
    if (signal.aborted) return;

    const listed = new Set<string>();
    for (const object of items) {
      const key = objectKey(object);
      listed.add(key);
      this.store(key, object);
    }
    for (const key of [...this.cache.keys()]) {
      if (!listed.has(key)) this.remove(key, this.cache.get(key) as T);
    }
    this.resourceVersion = resourceVersion;
    this.markSynced();
  }

  /** One watch from the last resourceVersion. Returns whether it was healthy (see MIN_HEALTHY_WATCH_MS). */
  private async watch(signal: AbortSignal): Promise<boolean> {
    const startedAt = Date.now();
    let delivered = false;
    const events = this.client.watch<T>(this.type, this.scope.namespace, {
      labelSelector: this.scope.labelSelector,
      fieldSelector: this.scope.fieldSelector,
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: true,
      // Spread reconnections of many informers over time, like client-go (5–10 minutes).
      timeoutSeconds: 300 + Math.floor(Math.random() * 300),
      signal,
    });
    for await (const event of events) {
      delivered = true;
      // An event of a traced write: the handlers (and the work they queue) continue its trace.
      const traced = tracingActive() ? traceOfEvent(event) : undefined;
      if (traced) runInTrace(traced, () => this.apply(event));
      else this.apply(event);
    }
    return delivered || Date.now() - startedAt >= MIN_HEALTHY_WATCH_MS;
  }

  private apply(event: WatchEvent<T>): void {
    if (event.type === 'ERROR') throw ApiError.fromStatus(isStatus(event.object) ? event.object : {});
    const object = event.object as T;
    if (event.type === 'ADDED' || event.type === 'MODIFIED') this.store(objectKey(object), object);
    else if (event.type === 'DELETED') {
      const key = objectKey(object);
      if (this.cache.get(key)) this.remove(key, object);
    }
    this.resourceVersion = object.metadata.resourceVersion || this.resourceVersion;
  }

  /** Caches `object`; handlers hear of it only if it is new or its resourceVersion moved. */
  private store(key: string, object: T): void {
    const old = this.cache.set(key, object);
    if (!old) this.notify('add', object);
    else if (old.metadata.resourceVersion !== object.metadata.resourceVersion) this.notify('update', old, object);
  }

  /** Handlers receive the last state of the object (the DELETED event's, or the cached one on relist). */
  private remove(key: string, lastState: T): void {
    this.cache.delete(key);
    this.notify('delete', lastState);
  }

  private resync(): void {
    if (!this.synced) return;
    for (const object of this.cache.values()) this.notify('update', object, object);
  }

  private markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    for (const listener of this.syncListeners.splice(0)) listener();
  }

  private notify(kind: 'add' | 'delete', object: T): void;
  private notify(kind: 'update', oldObject: T, newObject: T): void;
  private notify(kind: keyof InformerHandlers<T>, first: T, second?: T): void {
    for (const handlers of this.handlers) this.call(handlers, kind, first, second);
  }

  /** A failing handler is one controller's bug; it must not stop the others from hearing about changes. */
  private call(handlers: InformerHandlers<T>, kind: keyof InformerHandlers<T>, first: T, second?: T): void {
    try {
      if (kind === 'update') handlers.update?.(first, second as T);
      else handlers[kind]?.(first);
    } catch (err) {
      this.logger.error({ err, handler: kind, key: objectKey(second ?? first) }, 'informer handler failed');
    }
  }
}

function isExpired(err: unknown): boolean {
  return err instanceof ApiError && err.status === 410;
}
