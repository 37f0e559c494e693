import { isPodAvailable, isPodReady, type Pod, type ReplicaSet, type ReplicaSetCondition, type ReplicaSetStatus } from '@skiff/api';
import { kubeTime } from '@skiff/controller-manager';
import { REPLICA_FAILURE } from './names.js';

/** Why the last attempt to reach the desired count failed. */
export interface ManageFailure {
  reason: 'FailedCreate' | 'FailedDelete';
  message: string;
}

/**
 * The status a ReplicaSet should report for the active pods it owns. Counts that are zero are left out,
 * as Kubernetes serialises them; `replicas` is always present.
 */
export function calculateStatus(rs: ReplicaSet, pods: readonly Pod[], failure: ManageFailure | undefined, now: number): ReplicaSetStatus {
  const templateLabels = Object.entries(rs.spec.template.metadata?.labels ?? {});
  const minReadySeconds = rs.spec.minReadySeconds ?? 0;
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const pod of pods) {
    if (templateLabels.every(([key, value]) => pod.metadata.labels?.[key] === value)) fullyLabeled += 1;
    if (isPodReady(pod)) {
      ready += 1;
      if (isPodAvailable(pod, minReadySeconds, now)) available += 1;
    }
  }

  const status: ReplicaSetStatus = { replicas: pods.length };
  if (fullyLabeled) status.fullyLabeledReplicas = fullyLabeled;
  if (ready) status.readyReplicas = ready;
  if (available) status.availableReplicas = available;
  if (rs.metadata.generation) status.observedGeneration = rs.metadata.generation;
  const conditions = nextConditions(conditionsOf(rs), failure, now);
  if (conditions.length > 0) status.conditions = conditions;
  return status;
}

/** Keeps an existing ReplicaFailure condition while failures go on; drops it once the ReplicaSet is healthy. */
function nextConditions(current: ReplicaSetCondition[], failure: ManageFailure | undefined, now: number): ReplicaSetCondition[] {
  const others = current.filter((condition) => condition.type !== REPLICA_FAILURE);
  if (!failure) return others;
  const existing = current.find((condition) => condition.type === REPLICA_FAILURE);
  if (existing) return current;
  return [...others, { type: REPLICA_FAILURE, status: 'True', lastTransitionTime: kubeTime(now), reason: failure.reason, message: failure.message }];
}

export function conditionsOf(rs: ReplicaSet): ReplicaSetCondition[] {
  return rs.status?.conditions ?? [];
}

/** Whether writing `status` would change what the object already reports. */
export function statusChanged(object: { status?: ReplicaSetStatus }, status: ReplicaSetStatus): boolean {
  const current = object.status ?? { replicas: 0 };
  return (
    (current.replicas ?? 0) !== status.replicas ||
    (current.fullyLabeledReplicas ?? 0) !== (status.fullyLabeledReplicas ?? 0) ||
    (current.readyReplicas ?? 0) !== (status.readyReplicas ?? 0) ||
    (current.availableReplicas ?? 0) !== (status.availableReplicas ?? 0) ||
    (current.observedGeneration ?? 0) !== (status.observedGeneration ?? 0) ||
    JSON.stringify(current.conditions ?? []) !== JSON.stringify(status.conditions ?? [])
  );
}
