import type { Node } from '@skiff/api';

/**
 * Counts per topology domain: topology key → label value → count. Domains whose count drops to zero are
 * removed, so `size` says whether anything is counted at all.
 */
export class TopologyCounts {
  private readonly byKey = new Map<string, Map<string, number>>();

  get size(): number {
    return this.byKey.size;
  }

  /** Adds `delta` to the domain `node` is in for `topologyKey`; a node without that label is in none. */
  add(node: Node, topologyKey: string, delta: number): void {
    const value = node.metadata.labels?.[topologyKey];
    if (value === undefined) return;
    let values = this.byKey.get(topologyKey);
    if (!values) this.byKey.set(topologyKey, (values = new Map()));
    const count = (values.get(value) ?? 0) + delta;
    if (count !== 0) {
      values.set(value, count);
      return;
    }
    values.delete(value);
    if (values.size === 0) this.byKey.delete(topologyKey);
  }

  get(topologyKey: string, value: string): number {
    return this.byKey.get(topologyKey)?.get(value) ?? 0;
  }

  /** Whether some domain `node` is in (for any counted key) has a positive count. */
  anyPositiveFor(node: Node): boolean {
    const labels = node.metadata.labels;
    if (!labels) return false;
    for (const [key, values] of this.byKey) {
      const value = labels[key];
      if (value !== undefined && (values.get(value) ?? 0) > 0) return true;
    }
    return false;
  }

  /** The sum of the counts of the domains `node` is in. */
  sumFor(node: Node): number {
    const labels = node.metadata.labels;
    if (!labels) return 0;
    let sum = 0;
    for (const [key, values] of this.byKey) {
      const value = labels[key];
      if (value !== undefined) sum += values.get(value) ?? 0;
    }
    return sum;
  }

  clone(): TopologyCounts {
    const copy = new TopologyCounts();
    for (const [key, values] of this.byKey) copy.byKey.set(key, new Map(values));
    return copy;
  }
}
