import { isPodTerminal, scaledIntOrPercent, type OwnerReference, type Pod, type RollingUpdateStatefulSetStrategy, type StatefulSet } from '@skiff/api';
import { claimsMatchRetention, missingClaims, podClaimIsStale, type ClaimLookup } from './claims.js';
import { identityMatches, newMemberPod, ordinalOf, replicasOf, revisionOf, startOrdinal, storageMatches } from './identity.js';
import { isPending, isRunningAndAvailable, isRunningAndReady, isTerminating, isUnavailable } from './pod-state.js';

export interface PlanInput {
  set: StatefulSet;
  /** The set with the template of its current revision. */
  currentSet: StatefulSet;
  /** The set with the template of its update revision (the template it has now). */
  updateSet: StatefulSet;
  currentRevision: string;
  updateRevision: string;
  /** The set's members: pods it controls whose names carry its name. */
  pods: readonly Pod[];
  claims: ClaimLookup;
  controllerRef: OwnerReference;
  now: number;
}

export type Action =
  /** Create the pod's missing claims, then the pod. */
  | { type: 'create'; pod: Pod }
  /** Delete a Failed or Succeeded pod; a later pass creates it anew. */
  | { type: 'replace-finished'; pod: Pod }
  /** Create the missing claims of a Pending pod and give its claims the owners the retention policy asks for. */
  | { type: 'create-claims'; pod: Pod }
  /** Restore the pod's identity labels and claim owners. */
  | { type: 'update'; pod: Pod }
  /** Give a scaled-down pod's claims the owners the retention policy asks for, before the pod goes. */
  | { type: 'retain-claims'; pod: Pod }
  | { type: 'scale-down'; pod: Pod }
  /** Delete a pod of an older revision; it comes back from the update revision. */
  | { type: 'roll'; pod: Pod };

/**
 * One pass over a StatefulSet, in the order it is carried out: the work on each replica (its actions in
 * order), then claim owners of scaled-down pods, then the scale-down, then the rolling update. With
 * OrderedReady, a pass stops at the first pod that is not Running, Ready and Available, and does at most
 * one creation or deletion; with Parallel, every phase runs in full.
 */
export interface Plan {
  monotonic: boolean;
  replicas: Action[][];
  condemnedClaims: Action[];
  condemned: Action[];
  rolling: Action[];
  /** What an OrderedReady pass stopped at, for the logs. */
  waitingFor?: string;
}

/** `maxUnavailable` as a pod count: a percentage of the replicas rounded down, at least 1 (also when unset or unreadable). */
export function maxUnavailableOf(value: RollingUpdateStatefulSetStrategy['maxUnavailable'], replicas: number): number {
  const count = value === undefined ? undefined : scaledIntOrPercent(value, replicas, false);
  return count !== undefined && count >= 1 ? count : 1;
}

export function partitionOf(set: StatefulSet): number {
  return set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
}

export function isOrderedReady(set: StatefulSet): boolean {
  return set.spec.podManagementPolicy !== 'Parallel';
}

/**
 * The pod a missing ordinal gets: below the partition, the current revision (a partitioned rollout does
 * not reach it); otherwise the update revision.
 */
export function newVersionedPod(input: PlanInput, ordinal: number): Pod {
  const strategy = input.set.spec.updateStrategy;
  const keepsCurrent =
    (strategy?.type !== 'OnDelete' && strategy?.rollingUpdate === undefined && ordinal < startOrdinal(input.set) + (input.set.status?.currentReplicas ?? 0)) ||
    (strategy?.rollingUpdate !== undefined && ordinal < startOrdinal(input.set) + partitionOf(input.set));
  return keepsCurrent
    ? newMemberPod(input.currentSet, ordinal, input.currentRevision, input.controllerRef)
    : newMemberPod(input.updateSet, ordinal, input.updateRevision, input.controllerRef);
}

/** Replicas by ordinal (missing ones as pods still to create) and condemned pods, highest ordinal first. */
export function splitMembers(input: PlanInput): { replicas: Pod[]; missing: Set<Pod>; condemned: Pod[] } {
  const { set } = input;
  const start = startOrdinal(set);
  const count = replicasOf(set);
  const slots: (Pod | undefined)[] = Array.from({ length: count }, () => undefined);
  const condemned: Pod[] = [];
  for (const pod of input.pods) {
    const ordinal = ordinalOf(pod);
    if (ordinal >= start && ordinal < start + count) slots[ordinal - start] = pod;
    else if (ordinal >= 0) condemned.push(pod);
  }
  condemned.sort((a, b) => ordinalOf(b) - ordinalOf(a));
  const missing = new Set<Pod>();
  const replicas = slots.map((pod, index) => {
    if (pod) return pod;
    const created = newVersionedPod(input, start + index);
    missing.add(created);
    return created;
  });
  return { replicas, missing, condemned };
}

interface ReplicaWork {
  actions: Action[];
  /** Set when an OrderedReady pass must stop at this pod. */
  blocked?: string;
}

function replicaWork(input: PlanInput, pod: Pod, missing: boolean, monotonic: boolean): ReplicaWork {
  const { set, claims, now } = input;
  const name = pod.metadata.name!;
  const minReadySeconds = set.spec.minReadySeconds ?? 0;
  if (isPodTerminal(pod)) return { actions: isTerminating(pod) ? [] : [{ type: 'replace-finished', pod }], blocked: `${name} to be replaced` };
  if (missing) {
    if (podClaimIsStale(set, pod, claims)) return { actions: [], blocked: `the claims of the earlier ${name} to be deleted` };
    return { actions: [{ type: 'create', pod }], blocked: monotonic ? `${name} to be created` : undefined };
  }
  const actions: Action[] = [];
  const claimsPending = isPending(pod) && (missingClaims(set, pod, claims).length > 0 || !claimsMatchRetention(set, pod, claims));
  if (claimsPending) actions.push({ type: 'create-claims', pod });
  if (monotonic) {
    if (isTerminating(pod)) return { actions, blocked: `${name} to terminate` };
    if (!isRunningAndReady(pod)) return { actions, blocked: `${name} to be Running and Ready` };
    if (!isRunningAndAvailable(pod, minReadySeconds, now)) return { actions, blocked: `${name} to be Available` };
  }
  const retentionMatches = claimsPending || claimsMatchRetention(set, pod, claims);
  if (!identityMatches(set, pod) || !storageMatches(set, pod) || !retentionMatches) actions.push({ type: 'update', pod });
  return { actions };
}

/** What one pass over `input.set` does, decided from the cached pods and claims alone. */
export function planStatefulSet(input: PlanInput): Plan {
  const { set, claims, now } = input;
  const monotonic = isOrderedReady(set);
  const minReadySeconds = set.spec.minReadySeconds ?? 0;
  const plan: Plan = { monotonic, replicas: [], condemnedClaims: [], condemned: [], rolling: [] };
  // A set being deleted only reports status; the garbage collector takes its pods.
  if (set.metadata.deletionTimestamp) return plan;

  const { replicas, missing, condemned } = splitMembers(input);
  const firstUnavailable =
    replicas.find((pod) => isUnavailable(pod, minReadySeconds, now)) ?? [...condemned].reverse().find((pod) => isUnavailable(pod, minReadySeconds, now));

  for (const pod of replicas) {
    const work = replicaWork(input, pod, missing.has(pod), monotonic);
    if (work.actions.length > 0) plan.replicas.push(work.actions);
    if (monotonic && work.blocked) return { ...{}, ...plan, waitingFor: work.blocked };
  }

  for (const pod of condemned) if (!claimsMatchRetention(set, pod, claims)) plan.condemnedClaims.push({ type: 'retain-claims', pod });

  for (const pod of condemned) {
    const name = pod.metadata.name!;
    if (isTerminating(pod)) {
      if (monotonic) return { ...{}, ...plan, waitingFor: `${name} to terminate` };
      continue;
    }
    if (monotonic && pod !== firstUnavailable && !isRunningAndAvailable(pod, minReadySeconds, now))
      return { ...{}, ...plan, waitingFor: `${name} to be Running, Ready and Available before it is deleted` };
    plan.condemned.push({ type: 'scale-down', pod });
    if (monotonic) return { ...{}, ...plan, waitingFor: `${name} to be deleted` };
  }

  if (set.spec.updateStrategy?.type === 'OnDelete') return plan;
  const count = replicas.length;
  const maxUnavailable = maxUnavailableOf(set.spec.updateStrategy?.rollingUpdate?.maxUnavailable, count);
  const unavailable = replicas.filter((pod) => isUnavailable(pod, minReadySeconds, now)).length;
  if (unavailable > maxUnavailable) return { ...{}, ...plan, waitingFor: `${unavailable - maxUnavailable} more pods to become available` };
  let budget = maxUnavailable - unavailable;
  for (let index = count - 1; index >= partitionOf(set) && budget > 0; index -= 1) {
    const pod = replicas[index]!;
    if (missing.has(pod) || isTerminating(pod) || revisionOf(pod) === input.updateRevision) continue;
    plan.rolling.push({ type: 'roll', pod });
    budget -= 1;
  }
  return plan;
}
