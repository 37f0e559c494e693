import type { Pod } from '@skiff/api';

/** Bound pods before unbound ones, then oldest first, then by name: the order in which a node's pods are preferred. */
export function compareScheduledThenOldest(a: Pod, b: Pod): number {
  const aBound = Boolean(a.spec.nodeName);
  const bBound = Boolean(b.spec.nodeName);
  if (aBound !== bBound) return aBound ? -1 : 1;
  const aTime = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const bTime = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  if (aTime !== bTime) return aTime - bTime;
  return (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}
