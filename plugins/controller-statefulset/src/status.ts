import type { Pod, StatefulSet, StatefulSetStatus } from '@skiff/api';
import { replicasOf, revisionOf } from './identity.js';
import { isCreated, isRunningAndAvailable, isRunningAndReady, isTerminating } from './pod-state.js';

export interface StatusInput {
  set: StatefulSet;
  /** Every member pod the set has, in range or not. */
  pods: readonly Pod[];
  currentRevision: string;
  updateRevision: string;
  collisionCount: number;
  /** Pods this pass deleted for the rolling update: no longer at the current revision. */
  rolled: number;
  now: number;
}

/**
 * The status a StatefulSet reports. `replicas` and `availableReplicas` are always present, as upstream
 * serialises them; other counts only when non-zero. Once every replica is updated and ready under a
 * RollingUpdate strategy, the update revision becomes the current one.
 */
export function calculateStatus(input: StatusInput): StatefulSetStatus {
  const { set, now } = input;
  const minReadySeconds = set.spec.minReadySeconds ?? 0;
  let replicas = 0;
  let ready = 0;
  let available = 0;
  let current = 0;
  let updated = 0;
  for (const pod of input.pods) {
    if (isCreated(pod)) replicas += 1;
    if (isRunningAndReady(pod)) {
      ready += 1;
      if (isRunningAndAvailable(pod, minReadySeconds, now)) available += 1;
    }
    if (isCreated(pod) && !isTerminating(pod)) {
      if (revisionOf(pod) === input.currentRevision) current += 1;
      if (revisionOf(pod) === input.updateRevision) updated += 1;
    }
  }
  current -= input.rolled;

  let currentRevision = input.currentRevision;
  const desired = replicasOf(set);
  if (set.spec.updateStrategy?.type !== 'OnDelete' && updated === desired && ready === desired && replicas === desired) {
    current = updated;
    currentRevision = input.updateRevision;
  }

  const status: StatefulSetStatus = { replicas, availableReplicas: available };
  if (set.metadata.generation) status.observedGeneration = set.metadata.generation;
  if (ready) status.readyReplicas = ready;
  if (current > 0) status.currentReplicas = current;
  if (updated) status.updatedReplicas = updated;
  if (currentRevision) status.currentRevision = currentRevision;
  if (input.updateRevision) status.updateRevision = input.updateRevision;
  status.collisionCount = input.collisionCount;
  if (set.status?.conditions) status.conditions = set.status.conditions;
  return status;
}

const COMPARED = [
  'replicas',
  'readyReplicas',
  'availableReplicas',
  'currentReplicas',
  'updatedReplicas',
  'currentRevision',
  'updateRevision',
  'observedGeneration',
  'collisionCount',
] as const satisfies readonly (keyof StatefulSetStatus)[];

/** Whether writing `status` would change what the set already reports. */
export function statusChanged(set: StatefulSet, status: StatefulSetStatus): boolean {
  const current = set.status ?? { replicas: 0 };
  return COMPARED.some((field) => (current[field] ?? 0) !== (status[field] ?? 0));
}
