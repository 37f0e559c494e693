import type { KubeObject } from '@skiff/api';

export type Indexer<T> = (object: T) => string[];

/** The index every informer has: objects by `metadata.namespace` ('' for cluster-scoped ones). */
export const NAMESPACE_INDEX = 'namespace';

/** An informer's store: objects by key, plus secondary indexes kept current on every write. */
export class IndexedCache<T extends KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, Indexer<T>>();
  /** index name → index value → keys */
  private readonly indexes = new Map<string, Map<string, Set<string>>>();

  constructor() {
    this.addIndex(NAMESPACE_INDEX, (object) => [object.metadata.namespace ?? '']);
  }

  /** Adds an index and fills it from the current contents. Returns false if the name is already taken. */
  addIndex(name: string, indexer: Indexer<T>): boolean {
    if (this.indexers.has(name)) return false;
    this.indexers.set(name, indexer);
    this.indexes.set(name, new Map());
    for (const [key, object] of this.items) this.indexOne(name, indexer, key, object);
    return true;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  keys(): IterableIterator<string> {
    return this.items.keys();
  }

  values(): IterableIterator<T> {
    return this.items.values();
  }

  /** Stores `object` under `key` and returns what it replaced. */
  set(key: string, object: T): T | undefined {
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, object);
    for (const [name, indexer] of this.indexers) this.indexOne(name, indexer, key, object);
    return old;
  }

  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  byIndex(name: string, value: string): T[] {
    const keys = this.indexes.get(name)?.get(value);
    if (!keys) return [];
    return [...keys].map((key) => this.items.get(key) as T);
  }

  private indexOne(name: string, indexer: Indexer<T>, key: string, object: T): void {
    const index = this.indexes.get(name) as Map<string, Set<string>>;
    for (const value of new Set(indexer(object))) {
      let keys = index.get(value);
      if (!keys) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  /** Index functions are pure, so the old object yields exactly the values it was filed under. */
  private unindex(key: string, object: T): void {
    for (const [name, indexer] of this.indexers) {
      const index = this.indexes.get(name) as Map<string, Set<string>>;
      for (const value of indexer(object)) {
        const keys = index.get(value);
        if (!keys) continue;
        keys.delete(key);
        if (keys.size === 0) index.delete(value);
      }
    }
  }
}
