import type { Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet } from '@skiff/api';
import { canonicalJson } from '@skiff/controller-manager';
import { getCondition, newCondition, removeCondition, setCondition } from './conditions.js';
import { CONDITION, REASON } from './names.js';
import { actualReplicas, availableReplicas, readyReplicas, specReplicas } from './replicasets.js';
import { maxUnavailable } from './rolling.js';
import { desiredReplicas, hasProgressDeadline, progressDeadlineSeconds } from './spec.js';

const COUNTS = ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas', 'collisionCount'] as const;

/** Counts that are zero are left out, as Kubernetes serialises them. */
function withoutZeroCounts(status: DeploymentStatus): DeploymentStatus {
  const compact: DeploymentStatus = { ...status };
  for (const field of COUNTS) if (!compact[field]) delete compact[field];
  return compact;
}

/**
 * The counts a Deployment reports for its ReplicaSets, and its Available condition: true while at
 * least `replicas - maxUnavailable` pods are available. Other conditions are carried over.
 */
export function calculateStatus(d: Deployment, allRSs: readonly ReplicaSet[], newRS: ReplicaSet | undefined, now: number): DeploymentStatus {
  const available = availableReplicas(allRSs);
  let status: DeploymentStatus = withoutZeroCounts({
    observedGeneration: d.metadata.generation,
    replicas: actualReplicas(allRSs),
    updatedReplicas: newRS ? actualReplicas([newRS]) : 0,
    readyReplicas: readyReplicas(allRSs),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, specReplicas(allRSs) - available),
    collisionCount: d.status?.collisionCount,
  });
  if (d.status?.conditions?.length) status.conditions = d.status.conditions.map((condition) => ({ ...condition }));
  const minimumAvailable = available >= desiredReplicas(d) - maxUnavailable(d);
  status = setCondition(
    status,
    minimumAvailable
      ? newCondition(CONDITION.AVAILABLE, 'True', REASON.MIN_REPLICAS_AVAILABLE, 'Deployment has minimum availability.', now)
      : newCondition(CONDITION.AVAILABLE, 'False', REASON.MIN_REPLICAS_UNAVAILABLE, 'Deployment does not have minimum availability.', now),
  );
  return status;
}

/** Every pod updated and available, nothing else left running, and the latest spec observed. */
export function deploymentComplete(d: Deployment, status: DeploymentStatus): boolean {
  const desired = desiredReplicas(d);
  return (
    (status.updatedReplicas ?? 0) === desired &&
    (status.replicas ?? 0) === desired &&
    (status.availableReplicas ?? 0) === desired &&
    (status.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)
  );
}

/** Whether `status` shows progress over what the Deployment reported before: more updated, ready or available pods, or fewer old ones. */
export function deploymentProgressing(d: Deployment, status: DeploymentStatus): boolean {
  const before = d.status ?? {};
  const oldPodsBefore = (before.replicas ?? 0) - (before.updatedReplicas ?? 0);
  const oldPodsNow = (status.replicas ?? 0) - (status.updatedReplicas ?? 0);
  return (
    (status.updatedReplicas ?? 0) > (before.updatedReplicas ?? 0) ||
    oldPodsNow < oldPodsBefore ||
    (status.readyReplicas ?? 0) > (before.readyReplicas ?? 0) ||
    (status.availableReplicas ?? 0) > (before.availableReplicas ?? 0)
  );
}

/** Whether the rollout made no progress for longer than its progress deadline. */
export function deploymentTimedOut(d: Deployment, status: DeploymentStatus, now: number): boolean {
  const deadline = progressDeadlineSeconds(d);
  const progressing = getCondition(status, CONDITION.PROGRESSING);
  if (deadline === undefined || !progressing) return false;
  if (progressing.reason === REASON.NEW_RS_AVAILABLE) return false;
  if (progressing.reason === REASON.TIMED_OUT) return true;
  if (!progressing.lastUpdateTime) return false;
  return Date.parse(progressing.lastUpdateTime) + deadline * 1000 < now;
}

/** The ReplicaFailure conditions of the ReplicaSets, the new one's first, as Deployment conditions. */
function replicaFailures(allRSs: readonly ReplicaSet[], newRS: ReplicaSet | undefined): DeploymentCondition[] {
  const failuresOf = (rs: ReplicaSet) =>
    (rs.status?.conditions ?? [])
      .filter((condition) => condition.type === CONDITION.REPLICA_FAILURE)
      .map((condition) => ({ ...{}, ...condition, lastUpdateTime: condition.lastTransitionTime }));
  const ofNew = newRS ? failuresOf(newRS) : [];
  return ofNew.length > 0 ? ofNew : allRSs.flatMap(failuresOf);
}

function describe(d: Deployment, newRS: ReplicaSet | undefined): string {
  return newRS ? `ReplicaSet "${newRS.metadata.name}"` : `Deployment "${d.metadata.name}"`;
}

/**
 * The status after a rollout step: counts, Available, and the Progressing condition that
 * `kubectl rollout status` follows — NewReplicaSetAvailable once complete, ReplicaSetUpdated (with a
 * fresh lastUpdateTime) whenever progress is seen, ProgressDeadlineExceeded once it stalled too long —
 * plus any ReplicaFailure of its ReplicaSets.
 */
export function rolloutStatus(d: Deployment, allRSs: readonly ReplicaSet[], newRS: ReplicaSet | undefined, now: number): DeploymentStatus {
  let status = calculateStatus(d, allRSs, newRS, now);
  if (!hasProgressDeadline(d)) status = removeCondition(status, CONDITION.PROGRESSING);

  const current = getCondition(d.status, CONDITION.PROGRESSING);
  const alreadyComplete = (status.replicas ?? 0) === (status.updatedReplicas ?? 0) && current?.reason === REASON.NEW_RS_AVAILABLE;
  if (hasProgressDeadline(d) && !alreadyComplete) {
    if (deploymentComplete(d, status)) {
      const message = `${describe(d, newRS)} has successfully progressed.`;
      status = setCondition(status, newCondition(CONDITION.PROGRESSING, 'True', REASON.NEW_RS_AVAILABLE, message, now));
    } else if (deploymentProgressing(d, status)) {
      // Progress refreshes lastUpdateTime even when the reason stays the same: the deadline counts from it.
      const progressing = newCondition(CONDITION.PROGRESSING, 'True', REASON.RS_UPDATED, `${describe(d, newRS)} is progressing.`, now);
      if (current?.status === 'True') progressing.lastTransitionTime = current.lastTransitionTime;
      status = { ...removeCondition(status, CONDITION.PROGRESSING) };
      status.conditions = [...(status.conditions ?? []), progressing];
    } else if (deploymentTimedOut(d, status, now)) {
      const message = `${describe(d, newRS)} has timed out progressing.`;
      status = setCondition(status, newCondition(CONDITION.PROGRESSING, 'False', REASON.TIMED_OUT, message, now));
    }
  }

  const [failure] = replicaFailures(allRSs, newRS);
  return failure ? setCondition(status, failure) : removeCondition(status, CONDITION.REPLICA_FAILURE);
}

/**
 * When a rollout that is still progressing should be looked at again if nothing else happens: when its
 * progress deadline runs out. Undefined when there is nothing to wait for.
 */
export function progressCheckDelay(d: Deployment, status: DeploymentStatus, now: number): number | undefined {
  const deadline = progressDeadlineSeconds(d);
  const progressing = getCondition(d.status, CONDITION.PROGRESSING);
  if (deadline === undefined || !progressing?.lastUpdateTime) return undefined;
  if (deploymentComplete(d, status) || progressing.reason === REASON.TIMED_OUT) return undefined;
  return Math.max(0, Date.parse(progressing.lastUpdateTime) + deadline * 1000 - now);
}

/** Whether two statuses say the same thing (zero counts and absent ones are alike; key order does not matter). */
export function sameStatus(a: DeploymentStatus | undefined, b: DeploymentStatus | undefined): boolean {
  return canonicalJson(withoutZeroCounts(a ?? {})) === canonicalJson(withoutZeroCounts(b ?? {}));
}
