import type { KubeObject } from '@skiff/api';

export type Indexer<T> = (object: T) => string[];

/** The index every informer has: objects by `metadata.namespace` ('' for cluster-scoped ones). */
export const NAMESPACE_INDEX = 'namespace';

interface Index<T> {
  indexer: Indexer<T>;
  /** index value → keys */
  keysByValue: Map<string, Set<string>>;
}

/** An informer's store: objects by key, plus secondary indexes kept current on every write. */
export class IndexedCache<T extends KubeObject> {
  private readonly items = new Map<string, T>();
  /** index name → its indexer, and index value → keys */
  private readonly indexes = new Map<string, Index<T>>();

  constructor() {
    this.addIndex(NAMESPACE_INDEX, (object) => [object.metadata.namespace ?? '']);
  }

  /** Adds an index and fills it from the current contents. Returns false if the name is already taken. */
  addIndex(name: string, indexer: Indexer<T>): boolean {
    if (this.indexes.has(name)) return false;
    const index: Index<T> = { indexer, keysByValue: new Map() };
    this.indexes.set(name, index);
    for (const [key, object] of this.items) this.indexOne(index, key, object);
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
    for (const index of this.indexes.values()) this.indexOne(index, key, object);
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
    const keys = this.indexes.get(name)?.keysByValue.get(value);
    if (!keys) return [];
    return [...keys].flatMap((key) => this.items.get(key) ?? []);
  }

  private indexOne({ indexer, keysByValue }: Index<T>, key: string, object: T): void {
    for (const value of new Set(indexer(object))) {
      let keys = keysByValue.get(value);
      if (!keys) keysByValue.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  /** Index functions are pure, so the old object yields exactly the values it was filed under. */
  private unindex(key: string, object: T): void {
    for (const { indexer, keysByValue } of this.indexes.values()) {
      for (const value of indexer(object)) {
        const keys = keysByValue.get(value);
        if (!keys) continue;
        keys.delete(key);
        if (keys.size === 0) keysByValue.delete(value);
      }
    }
  }
}
