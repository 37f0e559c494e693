import {
  ApiError,
  errors,
  isPodReady,
  labelSelectorFromObject,
  type Condition,
  type KubeObject,
  type Pod,
  type PodCondition,
  type PodDisruptionBudget,
} from '@skiff/api';
import type { ApiResponse, DeleteOptions, ResourceDefinition } from '@skiff/kernel';
import { StoreError } from '@skiff/store';
import { admissionRequest, mutate, validate } from '../pipeline/admission.js';
import { requireSubresourceBody } from '../pipeline/type-check.js';
import type { RestContext } from './context.js';
import { deleteOptionsOf } from './delete-options.js';
import { deleteNamed } from './delete.js';
import { collectionPrefix, objectKey } from './keys.js';
import { timestamp } from './metadata.js';
import { readObject } from './read.js';
import { json, successStatus } from './respond.js';
import { translateStoreError } from './store-errors.js';

const EVICTION_KIND = { group: 'policy', version: 'v1', kind: 'Eviction' };
/** Pending evictions a budget may list in `status.disruptedPods` before further ones are refused: its controller is not keeping up. */
const MAX_DISRUPTED_PODS = 2000;
const MAX_ATTEMPTS = 5;
const VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget.";
/** The StatusCause type clients look for (`apierrors.HasStatusCause(err, policyv1.DisruptionBudgetCause)`). */
const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';
/** What the disruption controller writes on a budget that allows nothing; its schema check refuses an empty message. */
const INSUFFICIENT_PODS_MESSAGE = 'too few healthy pods to allow a disruption';

/**
 * POST pods/<name>/eviction (kubectl drain): admission sees the Eviction, then the pod's disruption budget
 * decides, as kube-apiserver's eviction REST does. A pod that is not running yet, has finished or is being
 * deleted goes without asking. Otherwise its one budget (two or more are a 500) must allow a disruption:
 * `disruptionsAllowed` is taken down by one and the pod recorded in `disruptedPods` for the disruption
 * controller, or the answer is 429 with a `DisruptionBudget` cause. A pod that is not Ready may go without
 * taking a disruption when the budget's `unhealthyPodEvictionPolicy` is `AlwaysAllow`, or when the budget is
 * healthy anyway — guarded by the pod's resourceVersion, so it must not have turned Ready meanwhile. The pod
 * gets a `DisruptionTarget` condition, then is deleted with the eviction's delete options.
 */
export async function evictPod(ctx: RestContext, body: unknown): Promise<ApiResponse> {
  const eviction = requireSubresourceBody<KubeObject & { deleteOptions?: DeleteOptions }>(ctx, body, EVICTION_KIND, 'an Eviction');
  if (eviction.metadata.name && eviction.metadata.name !== ctx.info.name) throw errors.badRequest(`name in URL does not match name in Eviction object`);
  await readObject(ctx);
  const request = admissionRequest(ctx, { operation: 'CREATE', object: eviction, kind: EVICTION_KIND });
  request.object = (await mutate(ctx, request)) ?? eviction;
  await validate(ctx, request);
  const admitted = request.object as typeof eviction;
  // The type check may normalise the options in place, and the admitted Eviction can be frozen.
  const options = deleteOptionsOf(admitted.deleteOptions === undefined ? undefined : structuredClone(admitted.deleteOptions), {});
  // `kubectl drain --dry-run=server` asks in the Eviction's delete options rather than the query.
  const bodyDryRun = (admitted.deleteOptions as { dryRun?: unknown } | undefined)?.dryRun;
  const dryRun = ctx.dryRun || (Array.isArray(bodyDryRun) && bodyDryRun.includes('All'));
  return evict(dryRun === ctx.dryRun ? ctx : { ...{}, ...ctx, dryRun }, options);
}

/** The eviction proper, once admission has let the Eviction through. */
async function evict(ctx: RestContext, options: DeleteOptions): Promise<ApiResponse> {
  const pinned = options.preconditions?.resourceVersion !== undefined;

  let pod: Pod;
  for (let attempt = 1; ; attempt++) {
    pod = (await readObject<Pod>(ctx)).object;
    if (!canIgnoreBudget(pod)) break;
    // Unless the pod has finished or is going anyway, it must not have started running meanwhile.
    const guarded = !pinned && !isTerminal(pod) && !pod.metadata.deletionTimestamp ? withResourceVersion(options, pod) : options;
    try {
      await markAndDelete(ctx, guarded);
      return evicted(ctx);
    } catch (err) {
      if (!(isConflict(err) && !pinned && attempt < MAX_ATTEMPTS)) throw err;
    }
  }

  const budgets = await budgetsOf(ctx, pod);
  if (budgets.length > 1) {
    const message = 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.';
    return json({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 }, 500, ctx.warnings);
  }
  const budget = budgets[0];
  let deleteOptions = options;
  let unhealthyPass = false;
  if (budget) {
    const status = budget.object.status ?? {};
    const desired = status.desiredHealthy ?? 0;
    unhealthyPass =
      !isPodReady(pod) && (budget.object.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow' || ((status.currentHealthy ?? 0) >= desired && desired > 0));
    if (unhealthyPass) deleteOptions = withResourceVersion(options, pod);
    else await takeDisruption(ctx, budget.key, pod.metadata.name!);
  }
  try {
    await markAndDelete(ctx, deleteOptions);
  } catch (err) {
    // The unhealthy pod changed (it may be Ready now): the budget has to be asked again.
    if (isConflict(err) && unhealthyPass && !pinned)
      throw budgetViolation(`The disruption budget ${budget!.object.metadata.name} is still being processed by the server.`, 10);
    throw err;
  }
  return evicted(ctx);
}

function evicted(ctx: RestContext): ApiResponse {
  return json({ ...{}, ...successStatus(), code: 201 }, 201, ctx.warnings);
}

/** Pending, finished and terminating pods are not protected by a budget. */
function canIgnoreBudget(pod: Pod): boolean {
  return pod.status?.phase === 'Pending' || isTerminal(pod) || Boolean(pod.metadata.deletionTimestamp);
}

function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function withResourceVersion(options: DeleteOptions, pod: Pod): DeleteOptions {
  return { ...{}, ...options, preconditions: { ...{}, ...options.preconditions, resourceVersion: pod.metadata.resourceVersion } };
}

function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.reason === 'Conflict';
}

function budgetViolation(cause: string, retryAfterSeconds: number): ApiError {
  return new ApiError('SKIFF_ERR_API_TOO_MANY_REQUESTS', VIOLATION, {
    ...{},
    ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}),
    causes: [{ type: DISRUPTION_BUDGET_CAUSE, message: cause }],
  });
}

function budgetDefinition(ctx: RestContext): ResourceDefinition {
  const definition = ctx.core.registry.get('policy', 'poddisruptionbudgets');
  if (!definition) throw errors.internal('poddisruptionbudgets.policy is not served');
  return definition;
}

/** The budgets in the pod's namespace whose selector matches it (a budget with an invalid selector matches nothing). */
async function budgetsOf(ctx: RestContext, pod: Pod): Promise<{ key: string; object: PodDisruptionBudget }[]> {
  const listed = await ctx.core.store.list(collectionPrefix(budgetDefinition(ctx), pod.metadata.namespace));
  const matching: { key: string; object: PodDisruptionBudget }[] = [];
  for (const { key, object } of listed.items) {
    const pdb = object as PodDisruptionBudget;
    try {
      if (labelSelectorFromObject(pdb.spec?.selector).matches(pod.metadata.labels)) matching.push({ key, object: pdb });
    } catch {
      continue;
    }
  }
  return matching;
}

/**
 * Takes one disruption from the budget, in one store transaction: refused (429) while the controller has
 * not observed the budget's latest spec or nothing is allowed; the pod is recorded in `disruptedPods`.
 * A dry run checks but writes nothing.
 */
async function takeDisruption(ctx: RestContext, key: string, podName: string): Promise<void> {
  const definition = budgetDefinition(ctx);
  const check = (pdb: PodDisruptionBudget): PodDisruptionBudget => {
    const name = pdb.metadata.name!;
    const status = pdb.status ?? {};
    if ((status.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0))
      throw budgetViolation(`The disruption budget ${name} is still being processed by the server.`, 10);
    const allowed = status.disruptionsAllowed ?? 0;
    const forbidden = (why: string) =>
      errors.forbidden(`poddisruptionbudget.policy "${name}" is forbidden: ${why}`, { name, group: 'policy', kind: 'poddisruptionbudget' });
    if (allowed < 0) throw forbidden('pdb disruptions allowed is negative');
    if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS)
      throw forbidden('DisruptedPods map too big - too many evictions not confirmed by PDB controller');
    if (allowed === 0)
      throw budgetViolation(
        `The disruption budget ${name} needs ${status.desiredHealthy ?? 0} healthy pods and has ${status.currentHealthy ?? 0} currently`,
        0,
      );
    const now = timestamp();
    const conditions = allowed - 1 === 0 ? insufficientPods(status.conditions ?? [], status.observedGeneration ?? 0, now) : status.conditions;
    return {
      ...{},
      ...pdb,
      status: {
        ...{},
        ...status,
        disruptionsAllowed: allowed - 1,
        disruptedPods: { ...{}, ...status.disruptedPods, [podName]: now },
        ...(conditions ? { conditions } : {}),
      },
    };
  };
  try {
    await ctx.core.store.guaranteedUpdate(key, (current) => {
      if (!current) throw errors.notFound(definition.resource, definition.group, key.slice(key.lastIndexOf('/') + 1));
      const next = check(current.object as PodDisruptionBudget);
      return ctx.dryRun ? undefined : next;
    });
  } catch (err) {
    throw translateStoreError(err, definition, key.slice(key.lastIndexOf('/') + 1));
  }
}

/** The budget's `DisruptionAllowed` condition set to False / InsufficientPods. */
function insufficientPods(conditions: readonly Condition[], observedGeneration: number, now: string): Condition[] {
  const existing = conditions.find((condition) => condition.type === 'DisruptionAllowed');
  const lastTransitionTime = existing?.status === 'False' && existing.lastTransitionTime ? existing.lastTransitionTime : now;
  const condition: Condition = {
    type: 'DisruptionAllowed',
    status: 'False',
    reason: 'InsufficientPods',
    message: INSUFFICIENT_PODS_MESSAGE,
    observedGeneration,
    lastTransitionTime,
  };
  return existing ? conditions.map((c) => (c === existing ? condition : c)) : [...conditions, condition];
}

/**
 * Marks the pod with a `DisruptionTarget` condition (reason `EvictionByEvictionAPI`) and deletes it. The
 * delete options' preconditions are checked against the pod before the mark, and a resourceVersion
 * precondition moves on to the marked pod.
 */
async function markAndDelete(ctx: RestContext, options: DeleteOptions): Promise<void> {
  const deleteCtx: RestContext = { ...{}, ...ctx, info: { ...{}, ...ctx.info, subresource: '', verb: 'delete' } };
  if (ctx.dryRun) {
    await deleteNamed(deleteCtx, options);
    return;
  }
  const { definition, info } = ctx;
  const current = await readObject<Pod>(ctx);
  const pod = current.object;
  const { uid, resourceVersion } = options.preconditions ?? {};
  if (uid && uid !== pod.metadata.uid)
    throw errors.conflict(
      'Pod',
      '',
      info.name,
      `the UID in the precondition (${uid}) does not match the UID in record (${pod.metadata.uid}). The object might have been deleted and then recreated`,
    );
  if (resourceVersion && resourceVersion !== pod.metadata.resourceVersion)
    throw errors.conflict(
      'Pod',
      '',
      info.name,
      `the ResourceVersion in the precondition (${resourceVersion}) does not match the ResourceVersion in record (${pod.metadata.resourceVersion}). The object might have been modified`,
    );
  const marked: Pod = { ...{}, ...pod, status: { ...{}, ...pod.status, conditions: withDisruptionTarget(pod.status?.conditions ?? []) } };
  let written;
  try {
    written = await ctx.core.store.update(objectKey(definition, info.namespace, info.name), marked, { expectedRevision: current.revision });
  } catch (err) {
    if (err instanceof StoreError && err.kind === 'Conflict')
      throw errors.conflict(
        definition.resource,
        definition.group,
        info.name,
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    throw translateStoreError(err, definition, info.name);
  }
  const next = resourceVersion
    ? { ...{}, ...options, preconditions: { ...{}, ...options.preconditions, resourceVersion: written.object.metadata.resourceVersion } }
    : options;
  await deleteNamed(deleteCtx, next);
}

function withDisruptionTarget(conditions: readonly PodCondition[]): PodCondition[] {
  const existing = conditions.find((condition) => condition.type === 'DisruptionTarget');
  const condition: PodCondition = {
    type: 'DisruptionTarget',
    status: 'True',
    reason: 'EvictionByEvictionAPI',
    message: 'Eviction API: evicting',
    lastTransitionTime: existing?.status === 'True' && existing.lastTransitionTime ? existing.lastTransitionTime : timestamp(),
  };
  return existing ? conditions.map((c) => (c === existing ? condition : c)) : [...conditions, condition];
}
