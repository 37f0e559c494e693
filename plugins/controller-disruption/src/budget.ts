import {
  isPodReady,
  isPodTerminal,
  scaledIntOrPercent,
  type Condition,
  type Pod,
  type PodDisruptionBudget,
  type PodDisruptionBudgetSpec,
  type PodDisruptionBudgetStatus,
} from '@skiff/api';
import { kubeTime } from '@skiff/controller-manager';
import { DisruptionError } from './errors.js';
import {
  CONDITION_MESSAGE,
  CONDITION_REASON,
  DELETION_TIMEOUT_MS,
  DISRUPTION_ALLOWED,
  DISRUPTION_TARGET,
  STALE_POD_DISRUPTION_TIMEOUT_MS,
  TERMINATION_BY_KUBELET,
} from './names.js';

// The pure part of the disruption controller: from a budget, its pods and its pods' controllers' scale,
// the status it should have. Nothing here talks to the API server.

/** Whether a budget's bound is resolved against its pods' controllers' scale rather than the pods found. */
export function needsScale(spec: PodDisruptionBudgetSpec | undefined): boolean {
  return spec?.maxUnavailable !== undefined || typeof spec?.minAvailable === 'string';
}

/** A count as it is; a percentage of `total`, rounded up. */
function scaled(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  const count = /^\d+%$/.test(value) ? scaledIntOrPercent(value, total, true) : undefined;
  if (count === undefined) throw new DisruptionError('SKIFF_ERR_DISRUPTION_NOT_A_PERCENTAGE', { value });
  return count;
}

export interface BudgetTargets {
  expectedPods: number;
  desiredHealthy: number;
}

/**
 * What a budget expects: with `maxUnavailable`, its controllers' scale less that many (or that share);
 * with a `minAvailable` count, that count of the pods found; with a `minAvailable` percentage, that share
 * of its controllers' scale. `scale` is the sum over the controllers of the budget's pods (see {@link needsScale}).
 */
export function budgetTargets(spec: PodDisruptionBudgetSpec | undefined, podCount: number, scale: number): BudgetTargets {
  if (spec?.maxUnavailable !== undefined) return { expectedPods: scale, desiredHealthy: Math.max(0, scale - scaled(spec.maxUnavailable, scale)) };
  if (typeof spec?.minAvailable === 'number') return { expectedPods: podCount, desiredHealthy: spec.minAvailable };
  if (typeof spec?.minAvailable === 'string') return { expectedPods: scale, desiredHealthy: scaled(spec.minAvailable, scale) };
  return { expectedPods: 0, desiredHealthy: 0 };
}

export interface Disruptions {
  /** The entries of `status.disruptedPods` still pending: the pod exists, is not being deleted, and its time has not run out. */
  disruptedPods: Record<string, string>;
  /** Pods whose entry ran out without the pod being deleted. */
  notDeleted: Pod[];
  /** When the earliest pending entry runs out (ms since the epoch), for a look again then. */
  recheckAt?: number;
}

/** The pending disruptions of a budget at `now`, from its recorded `disruptedPods` and its current pods. */
export function pendingDisruptions(pods: readonly Pod[], recorded: Readonly<Record<string, string>> | undefined, now: number): Disruptions {
  const result: Disruptions = { disruptedPods: {}, notDeleted: [] };
  if (!recorded) return result;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const since = recorded[pod.metadata.name!];
    if (since === undefined) continue;
    const expires = Date.parse(since) + DELETION_TIMEOUT_MS;
    if (!(expires >= now)) {
      result.notDeleted.push(pod);
      continue;
    }
    result.disruptedPods[pod.metadata.name!] = since;
    if (result.recheckAt === undefined || expires < result.recheckAt) result.recheckAt = expires;
  }
  return result;
}

/** Ready pods that are neither being deleted nor recently let go by an eviction. */
export function countHealthy(pods: readonly Pod[], disruptedPods: Readonly<Record<string, string>>, now: number): number {
  let healthy = 0;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const since = disruptedPods[pod.metadata.name!];
    if (since !== undefined && Date.parse(since) + DELETION_TIMEOUT_MS > now) continue;
    if (isPodReady(pod)) healthy++;
  }
  return healthy;
}

type ConditionChange = Omit<Condition, 'lastTransitionTime'>;

/** `conditions` with `change` applied; the transition time moves only when the status does. */
function setCondition(conditions: readonly Condition[], change: ConditionChange, now: number): Condition[] {
  const existing = conditions.find((condition) => condition.type === change.type);
  if (!existing) return [...conditions, { ...{}, ...change, lastTransitionTime: kubeTime(now) }];
  const lastTransitionTime = existing.status === change.status && existing.lastTransitionTime ? existing.lastTransitionTime : kubeTime(now);
  return conditions.map((condition) => (condition === existing ? { ...{}, ...change, lastTransitionTime } : condition));
}

function allowedCondition(disruptionsAllowed: number, observedGeneration: number): ConditionChange {
  return disruptionsAllowed > 0
    ? { type: DISRUPTION_ALLOWED, status: 'True', reason: CONDITION_REASON.SUFFICIENT_PODS, message: CONDITION_MESSAGE.SUFFICIENT_PODS, observedGeneration }
    : {
        type: DISRUPTION_ALLOWED,
        status: 'False',
        reason: CONDITION_REASON.INSUFFICIENT_PODS,
        message: CONDITION_MESSAGE.INSUFFICIENT_PODS,
        observedGeneration,
      };
}

function conditionUpToDate(status: PodDisruptionBudgetStatus, generation: number): boolean {
  const condition = status.conditions?.find((candidate) => candidate.type === DISRUPTION_ALLOWED);
  if (!condition || (status.observedGeneration ?? 0) !== generation) return false;
  const wanted = allowedCondition(status.disruptionsAllowed ?? 0, generation);
  return condition.status === wanted.status && condition.reason === wanted.reason;
}

function sameTimes(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a ?? {});
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a![key]);
}

export interface ObservedBudget extends BudgetTargets {
  currentHealthy: number;
  disruptedPods: Record<string, string>;
}

/**
 * The status a budget should have, or `undefined` when it has it already. Nothing may be disrupted while
 * the budget expects no pods, so a budget whose first pods the controller has not seen yet is safe.
 * The only condition kept is `DisruptionAllowed`, as upstream writes it.
 */
export function nextStatus(pdb: PodDisruptionBudget, observed: ObservedBudget, now: number): PodDisruptionBudgetStatus | undefined {
  const { currentHealthy, desiredHealthy, expectedPods, disruptedPods } = observed;
  const disruptionsAllowed = expectedPods > 0 ? Math.max(0, currentHealthy - desiredHealthy) : 0;
  const generation = pdb.metadata.generation ?? 0;
  const old = pdb.status ?? {};
  if (
    old.currentHealthy === currentHealthy &&
    old.desiredHealthy === desiredHealthy &&
    old.expectedPods === expectedPods &&
    old.disruptionsAllowed === disruptionsAllowed &&
    sameTimes(old.disruptedPods, disruptedPods) &&
    old.observedGeneration === generation &&
    conditionUpToDate(old, generation)
  )
    return undefined;
  const previous = (old.conditions ?? []).filter((condition) => condition.type === DISRUPTION_ALLOWED);
  return {
    currentHealthy,
    desiredHealthy,
    expectedPods,
    disruptionsAllowed,
    ...(Object.keys(disruptedPods).length > 0 ? { disruptedPods } : {}),
    observedGeneration: generation,
    conditions: setCondition(previous, allowedCondition(disruptionsAllowed, generation), now),
  };
}

/**
 * The status of a budget whose sync failed: nothing may be disrupted, and the `DisruptionAllowed` condition
 * says why (reason `SyncFailed`); the rest stays as it was. `undefined` when the budget shows that already.
 */
export function failedStatus(pdb: PodDisruptionBudget, message: string, now: number): PodDisruptionBudgetStatus | undefined {
  const old = pdb.status ?? {};
  const change: ConditionChange = {
    type: DISRUPTION_ALLOWED,
    status: 'False',
    reason: CONDITION_REASON.SYNC_FAILED,
    message,
    observedGeneration: old.observedGeneration ?? 0,
  };
  const current = old.conditions?.find((condition) => condition.type === DISRUPTION_ALLOWED);
  const unchanged =
    old.disruptionsAllowed === 0 &&
    current?.status === change.status &&
    current.reason === change.reason &&
    current.message === change.message &&
    (current.observedGeneration ?? 0) === change.observedGeneration;
  if (unchanged) return undefined;
  return { ...{}, ...old, disruptionsAllowed: 0, conditions: setCondition(old.conditions ?? [], change, now) };
}

/**
 * For a pod not being deleted that carries a `DisruptionTarget: True` condition someone other than the kubelet
 * set (an eviction that never led to a deletion): how long until the condition is stale, 0 if it is already.
 * `undefined` when the pod has no such condition, or has finished (its conditions stay as they are).
 */
export function staleDisruptionDelay(pod: Pod, now: number): number | undefined {
  if (pod.metadata.deletionTimestamp || isPodTerminal(pod)) return undefined;
  const condition = pod.status?.conditions?.find((candidate) => candidate.type === DISRUPTION_TARGET);
  if (condition?.status !== 'True' || condition.reason === TERMINATION_BY_KUBELET) return undefined;
  const since = condition.lastTransitionTime ? Date.parse(condition.lastTransitionTime) : NaN;
  return Number.isNaN(since) ? 0 : Math.max(0, since + STALE_POD_DISRUPTION_TIMEOUT_MS - now);
}
