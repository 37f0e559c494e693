import { errors, type KubeObject } from '@skiff/api';
import type { ApiResponse, DeleteOptions } from '@skiff/kernel';
import { StoreError, type StoredObject } from '@skiff/store';
import { admissionRequest, mutate, validate } from '../pipeline/admission.js';
import type { RestContext } from './context.js';
import { deleteOptionsOf } from './delete-options.js';
import { planDeletion } from './deletion-plan.js';
import { objectKey } from './keys.js';
import { readObject } from './read.js';
import { parseResourceVersion } from './resource-version.js';
import { json } from './respond.js';
import { translateStoreError } from './store-errors.js';

const MAX_ATTEMPTS = 5;

/** DELETE of one object: 200 with the object, removed or (graceful, finalizers) marked for deletion. */
export async function deleteObject(ctx: RestContext, body: unknown): Promise<ApiResponse> {
  return json(await deleteNamed(ctx, deleteOptionsOf(body, ctx.request.query, ctx)), 200, ctx.warnings);
}

/**
 * Deletes the object `ctx.info` names: preconditions (409), admission (DELETE with the old object), then
 * the plan — remove now, or mark with deletionTimestamp. Retries on a concurrent write unless the client
 * pinned a resourceVersion.
 */
export async function deleteNamed(ctx: RestContext, options: DeleteOptions): Promise<KubeObject> {
  const { definition, info } = ctx;
  const key = objectKey(definition, info.namespace, info.name);
  for (let attempt = 1; ; attempt++) {
    const current = await readObject(ctx, { includeUninitialized: true });
    checkPreconditions(ctx, current, options);
    const request = admissionRequest(ctx, { operation: 'DELETE', oldObject: current.object });
    await mutate(ctx, request);
    await validate(ctx, request);
    const plan = planDeletion(definition, current.object, options);
    if (plan.action === 'unchanged') return current.object;
    if (ctx.dryRun) return plan.action === 'mark' ? plan.object : current.object;
    try {
      if (plan.action === 'remove') return (await ctx.core.store.delete(key, { expectedRevision: current.revision })).object;
      return (await ctx.core.store.update(key, plan.object, { expectedRevision: current.revision })).object;
    } catch (err) {
      const retry = err instanceof StoreError && err.kind === 'Conflict' && !options.preconditions?.resourceVersion && attempt < MAX_ATTEMPTS;
      if (!retry) throw translateStoreError(err, definition, info.name);
    }
  }
}

/** DeleteOptions.preconditions: uid and resourceVersion (already known to parse, see deleteOptionsOf). */
function checkPreconditions(ctx: RestContext, current: StoredObject, options: DeleteOptions): void {
  const { uid, resourceVersion } = options.preconditions ?? {};
  const { definition, info } = ctx;
  const object = current.object;
  if (uid && uid !== object.metadata.uid)
    throw errors.conflict(
      definition.resource,
      definition.group,
      info.name,
      `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${object.metadata.uid}`,
    );
  const revision = parseResourceVersion(resourceVersion, 'preconditions.resourceVersion');
  if (revision !== undefined && revision !== current.revision)
    throw errors.conflict(
      definition.resource,
      definition.group,
      info.name,
      `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${object.metadata.resourceVersion}`,
    );
}
