import type { Deployment, ReplicaSet } from '@skiff/api';
import { compareRevisions } from './annotations.js';
import { byCreationOldestFirst } from './replicasets.js';
import { replicasOf, revisionHistoryLimit } from './spec.js';

/**
 * Old ReplicaSets beyond `revisionHistoryLimit`, lowest revision first, that can go: only ones scaled
 * to zero, with no pods left and their latest spec observed, so nothing running is ever removed.
 */
export function replicaSetsToCleanUp(d: Deployment, oldRSs: readonly ReplicaSet[]): ReplicaSet[] {
  const cleanable = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp);
  const surplus = cleanable.length - revisionHistoryLimit(d);
  if (surplus <= 0) return [];
  const byRevision = [...cleanable].sort((a, b) => compareRevisions(a, b) || byCreationOldestFirst(a, b));
  return byRevision
    .slice(0, surplus)
    .filter((rs) => replicasOf(rs) === 0 && (rs.status?.replicas ?? 0) === 0 && (rs.metadata.generation ?? 0) <= (rs.status?.observedGeneration ?? 0));
}
