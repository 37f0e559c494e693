import type { Pod } from '@skiff/api';

export function isPodReady(pod: Pod): boolean {
  return pod.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True') ?? false;
}

/** Ready for at least `minReadySeconds`, judged by when the Ready condition last turned true. */
export function isPodAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const since = pod.status?.conditions?.find((condition) => condition.type === 'Ready')?.lastTransitionTime;
  return since !== undefined && Date.parse(since) + minReadySeconds * 1000 < now;
}

export function isPodTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';
}

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
