/**
 * Who holds a value (an address or a port): the service key (`namespace/name`), and whether the holding is
 * known to be stored with the service (`held`) or was handed out by a request that may still fail (`pending`).
 */
export interface Holding<V> {
  readonly value: V;
  readonly key: string;
  state: 'pending' | 'held';
  /** When it was handed out (ms since the epoch): pending holdings older than the grace period are checked. */
  readonly since: number;
  /** When its state last changed: the repair loop leaves holdings newer than the lists it compares with. */
  updated: number;
}

/** Values and their holders, indexed both ways. Records are compared by identity, so a release never frees a newer holding. */
export class Holdings<V> {
  private readonly byValue = new Map<V, Holding<V>>();
  private readonly byKey = new Map<string, Set<Holding<V>>>();

  get size(): number {
    return this.byValue.size;
  }

  get(value: V): Holding<V> | undefined {
    return this.byValue.get(value);
  }

  has(value: V): boolean {
    return this.byValue.has(value);
  }

  ofKey(key: string): Holding<V>[] {
    return [...(this.byKey.get(key) ?? [])];
  }

  all(): IterableIterator<Holding<V>> {
    return this.byValue.values();
  }

  /** Records `value` as held by `key`, replacing any earlier holding of it. */
  set(value: V, key: string, state: Holding<V>['state'], now = Date.now()): Holding<V> {
    this.remove(value);
    const holding: Holding<V> = { value, key, state, since: now, updated: now };
    this.byValue.set(value, holding);
    let set = this.byKey.get(key);
    if (!set) this.byKey.set(key, (set = new Set()));
    set.add(holding);
    return holding;
  }

  /** Marks a holding as stored with its Service, if it is still the one recorded for its value. */
  confirm(holding: Holding<V>, now = Date.now()): void {
    if (this.byValue.get(holding.value) !== holding || holding.state === 'held') return;
    holding.state = 'held';
    holding.updated = now;
  }

  /** Forgets a holding, if it is still the one recorded for its value. */
  release(holding: Holding<V>): boolean {
    if (this.byValue.get(holding.value) !== holding) return false;
    this.remove(holding.value);
    return true;
  }

  private remove(value: V): void {
    const holding = this.byValue.get(value);
    if (!holding) return;
    this.byValue.delete(value);
    const set = this.byKey.get(holding.key);
    set?.delete(holding);
    if (set?.size === 0) this.byKey.delete(holding.key);
  }
}
