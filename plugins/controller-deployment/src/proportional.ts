import type { Deployment, ReplicaSet } from '@skiff/api';
import { ANNOTATION } from './names.js';
import { maxSurge } from './rolling.js';
import { bySizeThenNewer, bySizeThenOlder, specReplicas } from './replicasets.js';
import { desiredReplicas, isRecreate, replicasOf } from './spec.js';
import type { ScaleStep } from './rolling.js';

/** Go's math.Round: halves round away from zero (JavaScript's Math.round rounds them up). */
function roundHalfAwayFromZero(value: number): number {
  return Math.sign(value) * Math.round(Math.abs(value));
}

/**
 * How many pods a ReplicaSet gains (or loses) when the Deployment is resized mid-rollout: its share of
 * the new total, in proportion to its size against the total it was last sized for (the max-replicas
 * annotation; the Deployment's current replica count if that is missing).
 */
function replicaSetFraction(rs: ReplicaSet, d: Deployment): number {
  if (desiredReplicas(d) === 0) return -replicasOf(rs);
  const deploymentReplicas = desiredReplicas(d) + maxSurge(d);
  const annotated = Number.parseInt(rs.metadata.annotations?.[ANNOTATION.MAX_REPLICAS] ?? '', 10);
  const base = Number.isNaN(annotated) ? (d.status?.replicas ?? 0) : annotated;
  if (base === 0) return 0;
  return roundHalfAwayFromZero((replicasOf(rs) * deploymentReplicas) / base) - replicasOf(rs);
}

/**
 * Proportional scaling: when a Deployment is resized while several ReplicaSets are active (a rollout
 * in progress), spread the added or removed pods over them in proportion to their sizes, so the rollout
 * keeps its shape instead of one version absorbing the whole change. Rounding leftovers go to the
 * largest ReplicaSet. Returns every active ReplicaSet with its new size: those keeping their size still
 * get their replica annotations brought up to date.
 */
export function proportionalScale(d: Deployment, activeRSs: readonly ReplicaSet[]): ScaleStep[] {
  if (isRecreate(d) || activeRSs.length === 0) return [];
  const allowedSize = desiredReplicas(d) > 0 ? desiredReplicas(d) + maxSurge(d) : 0;
  const toAdd = allowedSize - specReplicas(activeRSs);
  if (toAdd === 0) return [];

  const ordered = [...activeRSs].sort(toAdd > 0 ? bySizeThenNewer : bySizeThenOlder);
  const sizes = new Map<ReplicaSet, number>();
  let added = 0;
  for (const rs of ordered) {
    let proportion = 0;
    if (replicasOf(rs) > 0 && added !== toAdd) {
      const fraction = replicaSetFraction(rs, d);
      const allowed = toAdd - added;
      proportion = toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
    }
    sizes.set(rs, replicasOf(rs) + proportion);
    added += proportion;
  }
  const largest = ordered[0]!;
  sizes.set(largest, Math.max(0, sizes.get(largest)! + (toAdd - added)));

  return ordered.map((rs) => ({ rs, replicas: sizes.get(rs)! }));
}
