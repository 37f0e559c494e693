import { gauge, type Registry } from '@skiff/kernel';
import type { Store } from '@skiff/store';
import type { ResourceRegistryImpl } from '../registry/resource-registry.js';
import { collectionPrefix } from '../rest/keys.js';

/** Scrapes within this long reuse the last counts: counting reads every collection's keys. */
const COUNT_TTL_MS = 5_000;

/**
 * apiserver_storage_objects{resource}: the objects stored per resource (`pods`, `deployments.apps`), counted at scrape
 * time from the store's keys (one read of keys per collection, whatever its size). Registered by the primary thread
 * only: every thread sees the same store.
 */
export function registerStorageObjects(metrics: Registry, registry: ResourceRegistryImpl, store: () => Store | undefined): void {
  let counted: { at: number; counts: Map<string, number> } | undefined;
  const count = async (current: Store): Promise<Map<string, number>> => {
    const counts = new Map<string, number>();
    const seen = new Set<string>();
    for (const definition of registry.list()) {
      const prefix = collectionPrefix(definition);
      if (seen.has(prefix)) continue;
      seen.add(prefix);
      const page = await current.list(prefix, { limit: 1 });
      counts.set(definition.group ? `${definition.resource}.${definition.group}` : definition.resource, page.items.length + (page.remainingItemCount ?? 0));
    }
    return counts;
  };
  gauge(metrics, {
    name: 'apiserver_storage_objects',
    help: 'Objects in the store per resource, counted at most every 5 s.',
    labelNames: ['resource'],
    aggregator: 'max',
    async collect() {
      const current = store();
      if (!current) return;
      if (!counted || Date.now() - counted.at >= COUNT_TTL_MS) counted = { at: Date.now(), counts: await count(current) };
      for (const [resource, value] of counted.counts) this.set({ resource }, value);
    },
  });
}
