import {
  errorMessage,
  isApiError,
  RESOURCES,
  type ControllerRevision,
  type OwnerReference,
  type Pod,
  type StatefulSet,
  type StatefulSetStatus,
} from '@skiff/api';
import type { ApiClient, Logger } from '@skiff/kernel';
import type { ClaimLookup } from './claims.js';
import { revisionOf } from './identity.js';
import { MAX_BATCH_SIZE } from './names.js';
import { planStatefulSet, type Action, type Plan } from './plan.js';
import type { StatefulPodControl } from './pod-control.js';
import { applyRevision, equalRevisions, newRevision, nextRevisionNumber, revisionsToTruncate, sortRevisions } from './revisions.js';
import { calculateStatus, statusChanged } from './status.js';

export interface SyncDeps {
  client: ApiClient;
  logger: Logger;
  podControl: StatefulPodControl;
  claims: ClaimLookup;
  now: () => number;
}

export interface SyncResult {
  status: StatefulSetStatus;
}

interface Revisions {
  current: ControllerRevision;
  update: ControllerRevision;
  collisionCount: number;
}

/**
 * One pass over one StatefulSet: settle its current and update revisions, carry out the plan for its pods
 * and claims, write its status, and trim its revision history. A failed step stops the pass; the status
 * is written all the same and the error is thrown afterwards so the set is retried.
 */
export async function syncStatefulSet(
  deps: SyncDeps,
  set: StatefulSet,
  pods: readonly Pod[],
  revisions: readonly ControllerRevision[],
  controllerRef: OwnerReference,
): Promise<SyncResult> {
  const sorted = sortRevisions(revisions);
  const { current, update, collisionCount } = await resolveRevisions(deps.client, set, sorted);
  const now = deps.now();
  const plan = planStatefulSet({
    set,
    currentSet: applyRevision(set, current),
    updateSet: applyRevision(set, update),
    currentRevision: current.metadata.name!,
    updateRevision: update.metadata.name!,
    pods,
    claims: deps.claims,
    controllerRef,
    now,
  });
  if (plan.waitingFor)
    deps.logger.debug({ statefulSet: `${set.metadata.namespace}/${set.metadata.name}`, waitingFor: plan.waitingFor }, 'StatefulSet is waiting');

  let failure: unknown;
  let rolled = 0;
  try {
    rolled = await carryOut(deps.podControl, set, plan);
  } catch (err) {
    failure = err;
  }
  const status = calculateStatus({
    set,
    pods,
    currentRevision: current.metadata.name!,
    updateRevision: update.metadata.name!,
    collisionCount,
    rolled,
    now,
  });
  await writeStatus(deps.client, set, status);

  const live = new Set([current.metadata.name!, update.metadata.name!, ...pods.map(revisionOf)]);
  for (const revision of revisionsToTruncate(sorted, live, set.spec.revisionHistoryLimit ?? 10)) {
    try {
      await deps.client.delete(RESOURCES.controllerrevisions, revision.metadata.name!, revision.metadata.namespace);
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
    }
  }
  if (failure) throw failure;
  return { status };
}

/**
 * The current revision (the one `status.currentRevision` names, else the update revision) and the update
 * revision — the revision of the template the set has now: the newest revision when it records that
 * template, an older one renumbered to the newest when the template went back to it, or a new one.
 */
export async function resolveRevisions(client: ApiClient, set: StatefulSet, sorted: readonly ControllerRevision[]): Promise<Revisions> {
  let collisionCount = set.status?.collisionCount ?? 0;
  const next = nextRevisionNumber(sorted);
  const wanted = newRevision(set, next, collisionCount);
  const equal = sorted.filter((revision) => equalRevisions(revision, wanted));
  const newest = sorted[sorted.length - 1];
  let update: ControllerRevision;
  if (equal.length > 0 && newest && equalRevisions(newest, wanted)) update = newest;
  else if (equal.length > 0) {
    const previous = equal[equal.length - 1]!;
    update = await client.patch<ControllerRevision>(
      RESOURCES.controllerrevisions,
      previous.metadata.name!,
      { revision: next },
      {
        namespace: previous.metadata.namespace,
        patchType: 'merge',
      },
    );
  } else {
    ({ revision: update, collisionCount } = await createRevision(client, set, next, collisionCount));
  }
  const current = sorted.find((revision) => revision.metadata.name === set.status?.currentRevision) ?? update;
  return { current, update, collisionCount };
}

/**
 * Creates the revision; a revision of that name already there is ours when it records the same template
 * (our cache was behind), otherwise a hash collision: count it and try the next name.
 */
async function createRevision(
  client: ApiClient,
  set: StatefulSet,
  number: number,
  collisionCount: number,
): Promise<{ revision: ControllerRevision; collisionCount: number }> {
  for (let count = collisionCount; ; count += 1) {
    const wanted = newRevision(set, number, count);
    try {
      return { revision: await client.create<ControllerRevision>(RESOURCES.controllerrevisions, wanted, set.metadata.namespace), collisionCount: count };
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) throw err;
      const existing = await client.get<ControllerRevision>(RESOURCES.controllerrevisions, wanted.metadata.name!, set.metadata.namespace);
      if (equalRevisions(existing, wanted)) return { revision: existing, collisionCount: count };
    }
  }
}

/** Carries out a plan; returns how many pods the rolling update deleted. */
async function carryOut(podControl: StatefulPodControl, set: StatefulSet, plan: Plan): Promise<number> {
  const perform = (action: Action): Promise<void> => {
    switch (action.type) {
      case 'create':
        return podControl.createPod(set, action.pod);
      case 'create-claims':
        return podControl.createMissingClaims(set, action.pod);
      case 'update':
        return podControl.updatePod(set, action.pod);
      case 'retain-claims':
        return podControl.updateClaimOwners(set, action.pod);
      case 'replace-finished':
      case 'scale-down':
      case 'roll':
        return podControl.deletePod(set, action.pod);
    }
  };
  const performAll = async (actions: readonly Action[]): Promise<void> => {
    for (const action of actions) await perform(action);
  };
  const phase = async (groups: readonly (readonly Action[])[]): Promise<void> => {
    if (plan.monotonic) for (const group of groups) await performAll(group);
    else await slowStartBatch(groups, performAll);
  };
  await phase(plan.replicas);
  await phase(plan.condemnedClaims.map((action) => [action]));
  await phase(plan.condemned.map((action) => [action]));
  await phase(plan.rolling.map((action) => [action]));
  return plan.rolling.length;
}

/**
 * Works through `items` in growing parallel batches (1, 2, 4, … up to MAX_BATCH_SIZE), stopping after the
 * first batch with a failure: when every call fails alike (a quota, a webhook), that costs one request,
 * not hundreds.
 */
export async function slowStartBatch<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  for (let size = 1; next < items.length; size = Math.min(size * 2, MAX_BATCH_SIZE)) {
    const batch = items.slice(next, next + size);
    next += batch.length;
    const results = await Promise.allSettled(batch.map(fn));
    const failures: unknown[] = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected').map((result) => result.reason);
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, `[${failures.map(errorMessage).join(', ')}]`);
  }
}

/** Writes the status if it changed; on a conflict, once more against the current object. */
async function writeStatus(client: ApiClient, set: StatefulSet, status: StatefulSetStatus): Promise<void> {
  if (!statusChanged(set, status)) return;
  try {
    await client.updateStatus<StatefulSet>(RESOURCES.statefulsets, { ...{}, ...structuredClone(set), status });
  } catch (err) {
    if (isApiError(err, 'NotFound')) return;
    if (!isApiError(err, 'Conflict')) throw err;
    const fresh = await client.get<StatefulSet>(RESOURCES.statefulsets, set.metadata.name!, set.metadata.namespace);
    if (fresh.metadata.uid !== set.metadata.uid) return;
    await client.updateStatus<StatefulSet>(RESOURCES.statefulsets, { ...{}, ...fresh, status });
  }
}
