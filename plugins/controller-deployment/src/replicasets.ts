import type { ReplicaSet } from '@skiff/api';
import { replicasOf } from './spec.js';

/** Sum of `spec.replicas`: the pods the ReplicaSets are asked for. */
export function specReplicas(replicaSets: readonly ReplicaSet[]): number {
  return replicaSets.reduce((sum, rs) => sum + replicasOf(rs), 0);
}

/** Sum of `status.replicas`: the pods that exist. */
export function actualReplicas(replicaSets: readonly ReplicaSet[]): number {
  return replicaSets.reduce((sum, rs) => sum + (rs.status?.replicas ?? 0), 0);
}

export function readyReplicas(replicaSets: readonly ReplicaSet[]): number {
  return replicaSets.reduce((sum, rs) => sum + (rs.status?.readyReplicas ?? 0), 0);
}

export function availableReplicas(replicaSets: readonly ReplicaSet[]): number {
  return replicaSets.reduce((sum, rs) => sum + (rs.status?.availableReplicas ?? 0), 0);
}

/** ReplicaSets asked for at least one pod. */
export function activeReplicaSets(replicaSets: readonly (ReplicaSet | undefined)[]): ReplicaSet[] {
  return replicaSets.filter((rs): rs is ReplicaSet => rs !== undefined && replicasOf(rs) > 0);
}

function created(rs: ReplicaSet): number {
  return rs.metadata.creationTimestamp ? Date.parse(rs.metadata.creationTimestamp) : 0;
}

/** Oldest first; equal timestamps by name, so the order is stable. */
export function byCreationOldestFirst(a: ReplicaSet, b: ReplicaSet): number {
  return created(a) - created(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/** Largest first; equal sizes oldest first. */
export function bySizeThenOlder(a: ReplicaSet, b: ReplicaSet): number {
  return replicasOf(b) - replicasOf(a) || byCreationOldestFirst(a, b);
}

/** Largest first; equal sizes newest first. */
export function bySizeThenNewer(a: ReplicaSet, b: ReplicaSet): number {
  return replicasOf(b) - replicasOf(a) || created(b) - created(a);
}

/** Replaces the entry with the same uid (a fresher copy of the same ReplicaSet). */
export function withLatest(replicaSets: readonly ReplicaSet[], latest: ReplicaSet): ReplicaSet[] {
  return replicaSets.map((rs) => (rs.metadata.uid === latest.metadata.uid ? latest : rs));
}
