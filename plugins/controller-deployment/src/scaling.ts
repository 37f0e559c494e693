import type { Deployment, ReplicaSet } from '@skiff/api';
import { ANNOTATION } from './names.js';
import { activeReplicaSets, byCreationOldestFirst } from './replicasets.js';
import { desiredReplicas, replicasOf } from './spec.js';

/**
 * A resize of the Deployment (not a template change) shows as an active ReplicaSet that was last
 * scaled for a different `spec.replicas` than the Deployment has now.
 */
export function isScalingEvent(d: Deployment, replicaSets: readonly (ReplicaSet | undefined)[]): boolean {
  return activeReplicaSets(replicaSets).some((rs) => {
    const desired = rs.metadata.annotations?.[ANNOTATION.DESIRED_REPLICAS];
    return desired !== undefined && desired !== String(desiredReplicas(d));
  });
}

/**
 * The one ReplicaSet a resize can simply be applied to: the only active one, or, when none is active,
 * the new one (or else the newest old one). Undefined when several are active (a rollout in progress).
 */
export function findActiveOrLatest(newRS: ReplicaSet | undefined, oldRSs: readonly ReplicaSet[]): ReplicaSet | undefined {
  const active = activeReplicaSets([...oldRSs, newRS]);
  if (active.length === 1) return active[0];
  if (active.length > 1) return undefined;
  return newRS ?? [...oldRSs].sort(byCreationOldestFirst).at(-1);
}

/** The new ReplicaSet has all the pods the Deployment wants, all of them available. */
export function isSaturated(d: Deployment, rs: ReplicaSet | undefined): boolean {
  if (!rs) return false;
  const desired = desiredReplicas(d);
  return (
    rs.metadata.annotations?.[ANNOTATION.DESIRED_REPLICAS] === String(desired) && replicasOf(rs) === desired && (rs.status?.availableReplicas ?? 0) === desired
  );
}
