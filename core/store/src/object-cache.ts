import { deepFreeze, type KubeObject } from '@skiff/api';

/**
 * Decoded objects, by key — what upstream's watch cache is to etcd: lists of the current state read their keys
 * from LMDB and take objects unchanged since the last list from here instead of decoding every value.
 * Objects are frozen (shared by every reader). A key with a write in flight is never answered from here: its
 * commit may already be visible to a read transaction before the write's promise (which updates the cache)
 * resolves. Bounded; the oldest entries go first.
 */
export class ObjectCache {
  private readonly objects = new Map<string, KubeObject>();
  private readonly writing = new Map<string, number>();

  constructor(private readonly capacity: number) {}

  /** The object at `key`, when cached and no write to it is in flight. */
  get(key: string): KubeObject | undefined {
    if (this.writing.has(key)) return undefined;
    return this.objects.get(key);
  }

  /** Remembers what a read transaction found (only for keys with no write in flight); returns it frozen. */
  remember(key: string, object: KubeObject): KubeObject {
    if (this.writing.has(key)) return object;
    this.put(key, deepFreeze(object));
    return object;
  }

  writeStarted(key: string): void {
    this.writing.set(key, (this.writing.get(key) ?? 0) + 1);
    this.objects.delete(key);
  }

  /** A write finished (committed or not): the entry goes, and the next list reads the key from LMDB. */
  writeEnded(key: string): void {
    const left = (this.writing.get(key) ?? 1) - 1;
    if (left > 0) this.writing.set(key, left);
    else this.writing.delete(key);
    this.objects.delete(key);
  }

  /** Another thread changed `key`: the next list reads it from LMDB. */
  evict(key: string): void {
    this.objects.delete(key);
  }

  get size(): number {
    return this.objects.size;
  }

  clear(): void {
    this.objects.clear();
  }

  private put(key: string, object: KubeObject): void {
    this.objects.delete(key);
    this.objects.set(key, object);
    if (this.objects.size > this.capacity) this.objects.delete(this.objects.keys().next().value as string);
  }
}
