import type { KubeObject } from '@skiff/api';
import type { Informer } from '@skiff/kernel';

interface Assumed<T> {
  object: T;
  /** The resourceVersion of the informer's object the assumption was made over. */
  over: string | undefined;
}

/**
 * An informer's objects with the scheduler's own decisions laid over them: a volume assumed pre-bound to a
 * claim, a claim assumed to carry its selected node. The next pods see these at once, before the API writes
 * are made (in preBind) and come back through the watch. An assumption lasts until the informer's object
 * changes or goes (the API server's word wins), or until it is restored (unreserve).
 */
export class AssumeCache<T extends KubeObject> {
  private readonly assumed = new Map<string, Assumed<T>>();

  constructor(
    private readonly informer: Informer<T>,
    private readonly keyOf: (object: T) => string,
  ) {
    const settle = (object: T) => {
      const key = keyOf(object);
      if (this.assumed.get(key)?.over !== object.metadata.resourceVersion) this.assumed.delete(key);
    };
    informer.addHandlers({ update: (_old, object) => settle(object), delete: (object) => this.assumed.delete(keyOf(object)) });
  }

  /** The object as the scheduler sees it: the assumed version while it stands, else the informer's. */
  get(key: string): T | undefined {
    const latest = this.informer.get(key);
    const assumed = this.assumed.get(key);
    if (!assumed) return latest;
    if (latest && latest.metadata.resourceVersion === assumed.over) return assumed.object;
    this.assumed.delete(key);
    return latest;
  }

  /** The informer's object, never an assumption (what the API server last said). */
  getApi(key: string): T | undefined {
    return this.informer.get(key);
  }

  list(): T[] {
    return this.informer.list().map((object) => this.get(this.keyOf(object)) ?? object);
  }

  /**
   * Lays `object` over the informer's version it was derived from. Refused when the informer's object has
   * changed since (another update won) or is gone.
   */
  assume(object: T): void {
    const key = this.keyOf(object);
    const latest = this.informer.get(key);
    if (!latest) throw new Error(`cannot assume ${key}: it is not in the cache`);
    if (latest.metadata.resourceVersion !== object.metadata.resourceVersion) {
      throw new Error(`cannot assume ${key}: its resourceVersion ${object.metadata.resourceVersion} is not the cached ${latest.metadata.resourceVersion}`);
    }
    this.assumed.set(key, { object, over: latest.metadata.resourceVersion });
  }

  restore(key: string): void {
    this.assumed.delete(key);
  }
}
