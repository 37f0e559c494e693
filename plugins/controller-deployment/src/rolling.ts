import { scaledIntOrPercent, type Deployment, type ReplicaSet } from '@skiff/api';
import { DeploymentError } from './errors.js';
import { activeReplicaSets, availableReplicas, byCreationOldestFirst, specReplicas } from './replicasets.js';
import { desiredReplicas, isRecreate, replicasOf, rollingUpdateParams } from './spec.js';

/** A ReplicaSet and the size it should be scaled to. */
export interface ScaleStep {
  rs: ReplicaSet;
  replicas: number;
}

/**
 * An int-or-percent field as a pod count. Percentages of `total` round up for maxSurge and down for
 * maxUnavailable, as Kubernetes does, so a rollout always has room to move.
 */
export function scaledValue(value: number | string, total: number, roundUp: boolean, field: string): number {
  const count = scaledIntOrPercent(value, total, roundUp);
  if (count === undefined) throw new DeploymentError('SKIFF_ERR_DEPLOYMENT_INT_OR_PERCENT', { field, value: JSON.stringify(value) });
  return count;
}

/**
 * maxSurge and maxUnavailable as pod counts for `desired` replicas. Both zero would leave a rollout no
 * way to proceed, so unavailable is then raised to 1.
 */
export function resolveFenceposts(maxSurge: number | string, maxUnavailable: number | string, desired: number): { surge: number; unavailable: number } {
  const surge = scaledValue(maxSurge, desired, true, 'spec.strategy.rollingUpdate.maxSurge');
  const unavailable = scaledValue(maxUnavailable, desired, false, 'spec.strategy.rollingUpdate.maxUnavailable');
  if (surge === 0 && unavailable === 0) return { surge: 0, unavailable: 1 };
  return { surge, unavailable };
}

/** Pods a rolling update may run above `spec.replicas`; 0 for Recreate. */
export function maxSurge(d: Deployment): number {
  if (isRecreate(d)) return 0;
  const { maxSurge: surge, maxUnavailable } = rollingUpdateParams(d);
  return resolveFenceposts(surge, maxUnavailable, desiredReplicas(d)).surge;
}

/** Pods a rolling update may have unavailable, never more than `spec.replicas`; 0 for Recreate. */
export function maxUnavailable(d: Deployment): number {
  const desired = desiredReplicas(d);
  if (isRecreate(d) || desired === 0) return 0;
  const { maxSurge: surge, maxUnavailable: unavailable } = rollingUpdateParams(d);
  return Math.min(resolveFenceposts(surge, unavailable, desired).unavailable, desired);
}

/**
 * How big the new ReplicaSet may be now: for Recreate, the full size; for a rolling update, as big as
 * the surge allows (all ReplicaSets together at most `replicas + maxSurge`), never above `replicas`.
 */
export function newReplicaSetReplicas(d: Deployment, allRSs: readonly ReplicaSet[], newRS: ReplicaSet): number {
  const desired = desiredReplicas(d);
  if (isRecreate(d)) return desired;
  const maxTotalPods = desired + maxSurge(d);
  const currentPods = specReplicas(allRSs);
  if (currentPods >= maxTotalPods) return replicasOf(newRS);
  const scaleUp = Math.min(maxTotalPods - currentPods, desired - replicasOf(newRS));
  return replicasOf(newRS) + scaleUp;
}

/** The size the new ReplicaSet should be scaled to in this step of a rolling update, if it should change. */
export function planNewReplicaSetScale(d: Deployment, allRSs: readonly ReplicaSet[], newRS: ReplicaSet): number | undefined {
  const desired = desiredReplicas(d);
  const current = replicasOf(newRS);
  if (current === desired) return undefined;
  if (current > desired) return desired;
  const next = newReplicaSetReplicas(d, allRSs, newRS);
  return next === current ? undefined : next;
}

/**
 * The old ReplicaSets to scale down in this step of a rolling update, never going below
 * `replicas - maxUnavailable` available pods. Unhealthy old pods go first (they serve nobody, and
 * removing them can unblock a rollout stuck on a broken old version); then old ReplicaSets shrink,
 * oldest first, by as many pods as are available beyond the minimum.
 */
export function planOldReplicaSetsScaleDown(d: Deployment, allRSs: readonly ReplicaSet[], oldRSs: readonly ReplicaSet[], newRS: ReplicaSet): ScaleStep[] {
  const active = activeReplicaSets(oldRSs);
  if (specReplicas(active) === 0) return [];
  const minAvailable = desiredReplicas(d) - maxUnavailable(d);
  const newRSUnavailable = replicasOf(newRS) - (newRS.status?.availableReplicas ?? 0);
  const maxScaledDown = specReplicas(allRSs) - minAvailable - newRSUnavailable;
  if (maxScaledDown <= 0) return [];

  const ordered = [...active].sort(byCreationOldestFirst);
  const sizes = new Map(ordered.map((rs) => [rs, replicasOf(rs)]));

  let cleanedUp = 0;
  for (const rs of ordered) {
    if (cleanedUp >= maxScaledDown) break;
    const size = sizes.get(rs)!;
    const unhealthy = size - (rs.status?.availableReplicas ?? 0);
    if (size === 0 || unhealthy <= 0) continue;
    const remove = Math.min(maxScaledDown - cleanedUp, unhealthy);
    sizes.set(rs, size - remove);
    cleanedUp += remove;
  }

  const available = availableReplicas(allRSs);
  if (available > minAvailable) {
    const toScaleDown = available - minAvailable;
    let scaledDown = 0;
    for (const rs of ordered) {
      if (scaledDown >= toScaleDown) break;
      const size = sizes.get(rs)!;
      if (size === 0) continue;
      const remove = Math.min(size, toScaleDown - scaledDown);
      sizes.set(rs, size - remove);
      scaledDown += remove;
    }
  }

  return ordered.filter((rs) => sizes.get(rs) !== replicasOf(rs)).map((rs) => ({ rs, replicas: sizes.get(rs)! }));
}
