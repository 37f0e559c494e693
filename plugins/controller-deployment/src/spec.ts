import { labelSelectorFromObject, type Deployment, type ReplicaSet } from '@skiff/api';

/**
 * The Deployment and ReplicaSet fields the API defaults (apps/v1), read with those defaults so the
 * controller behaves the same whether or not the API server filled them in.
 */
const DEFAULT_MAX_SURGE = '25%';
const DEFAULT_MAX_UNAVAILABLE = '25%';
const DEFAULT_REVISION_HISTORY_LIMIT = 10;
const DEFAULT_PROGRESS_DEADLINE_SECONDS = 600;
/** A progress deadline of MaxInt32 means "no deadline". */
const NO_PROGRESS_DEADLINE = 2 ** 31 - 1;

export function desiredReplicas(d: Deployment): number {
  return d.spec.replicas ?? 1;
}

export function replicasOf(rs: ReplicaSet): number {
  return rs.spec.replicas ?? 1;
}

export function isRecreate(d: Deployment): boolean {
  return d.spec.strategy?.type === 'Recreate';
}

export function rollingUpdateParams(d: Deployment): { maxSurge: number | string; maxUnavailable: number | string } {
  const params = d.spec.strategy?.rollingUpdate;
  return { maxSurge: params?.maxSurge ?? DEFAULT_MAX_SURGE, maxUnavailable: params?.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE };
}

export function revisionHistoryLimit(d: Deployment): number {
  return d.spec.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT;
}

/** Seconds a rollout may go without progress before it is reported as failed; undefined for none. */
export function progressDeadlineSeconds(d: Deployment): number | undefined {
  const seconds = d.spec.progressDeadlineSeconds ?? DEFAULT_PROGRESS_DEADLINE_SECONDS;
  return seconds === NO_PROGRESS_DEADLINE ? undefined : seconds;
}

export function hasProgressDeadline(d: Deployment): boolean {
  return progressDeadlineSeconds(d) !== undefined;
}

/** `selector: {}` selects every pod in the namespace, which a Deployment must not do (nor act without one). */
export function isSelectorEmpty(d: Deployment): boolean {
  return !d.spec.selector || labelSelectorFromObject(d.spec.selector).empty;
}
