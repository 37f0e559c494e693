import type { KubeObject, ResourceQuota } from '@skiff/api';
import type { Amounts } from './amounts.js';
import { trackedKeys } from './scopes.js';
import { collectionsOfKey, usageOf, type Collection } from './usage.js';

/** Lists a namespace's stored objects of one collection. */
export type CollectionLister = (collection: Collection, namespace: string) => Promise<KubeObject[]>;

/** The collections a quota's hard keys are counted from. */
export function collectionsOf(quota: ResourceQuota): Collection[] {
  const seen = new Map<string, Collection>();
  for (const key of Object.keys(quota.spec?.hard ?? {}))
    for (const collection of collectionsOfKey(key)) seen.set(`${collection.group}/${collection.resource}`, collection);
  return [...seen.values()];
}

/** Adds what one object uses to `used`, for the keys of `quota` it counts towards. */
export function addObjectUsage(used: Amounts, quota: ResourceQuota, collection: Collection, object: KubeObject, usage = usageOf(collection, object)): void {
  for (const key of trackedKeys(quota, collection, object)) {
    const amount = usage.get(key);
    if (amount !== undefined) used.set(key, (used.get(key) ?? 0) + amount);
  }
}

/** What the objects in a namespace use of `quota`, every hard key present (0 when nothing counts towards it). */
export async function usedByStoredObjects(quota: ResourceQuota, list: CollectionLister): Promise<{ used: Amounts; objects: Map<string, KubeObject[]> }> {
  const namespace = quota.metadata.namespace ?? '';
  const used: Amounts = new Map(Object.keys(quota.spec?.hard ?? {}).map((key) => [key, 0]));
  const objects = new Map<string, KubeObject[]>();
  for (const collection of collectionsOf(quota)) {
    const items = await list(collection, namespace);
    objects.set(`${collection.group}/${collection.resource}`, items);
    for (const object of items) addObjectUsage(used, quota, collection, object);
  }
  return { used, objects };
}
