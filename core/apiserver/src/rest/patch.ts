import { applyApplyPatch, ApiError, errors, type KubeObject } from '@skiff/api';
import type { ApiResponse } from '@skiff/kernel';
import type { DecodedBody } from '../pipeline/decode-body.js';
import { fieldValidationOf, requireObject, typeCheck, withTypeMeta, type FieldValidation } from '../pipeline/type-check.js';
import { guardedUpdate } from './commit-update.js';
import type { RestContext } from './context.js';
import { createChecked } from './create.js';
import { objectKey } from './keys.js';
import { recordApply } from './managed-fields.js';
import { applyPatchDocument, checkPatchShape, patchKindOf, pinsResourceVersion, type PatchKind } from './patch-document.js';
import { json } from './respond.js';
import { checkIdentity } from './update.js';

/**
 * PATCH of an object or its status: merge, strategic merge, JSON patch or server-side apply. The patched
 * result is type-checked like a PUT body and goes through the same update rules. An apply patch to an
 * object that does not exist creates it (201).
 */
export async function patchObject(ctx: RestContext, body: DecodedBody): Promise<ApiResponse> {
  const kind = patchKindOf(body.mediaType, ctx.request.headers['content-type']);
  const patch = body.value;
  checkPatchShape(kind, patch);
  const validation = fieldValidationOf(ctx.request.query);
  const manager = ctx.request.query.fieldManager;
  if (kind === 'apply' && !manager) throw errors.badRequest('fieldManager is required for apply patch requests');
  const { definition, info } = ctx;

  if (kind === 'apply' && !info.subresource && !(await ctx.core.store.get(objectKey(definition, info.namespace, info.name))))
    return createByApply(ctx, patch as KubeObject, manager!, validation);

  const conditional = pinsResourceVersion(kind, patch);
  const updated = await guardedUpdate(ctx, (current) => {
    const patched = withTypeMeta(requireObject(patchOnce(ctx, kind, current.object, patch, manager), definition), definition);
    ctx.warnings = typeCheck(patched, definition, validation);
    checkIdentity(ctx, patched);
    return { object: patched, conditional };
  });
  return json(updated, 200, ctx.warnings);
}

/** Server-side apply of an object that does not exist yet: the applied configuration is created (201). */
async function createByApply(ctx: RestContext, applied: KubeObject, manager: string, validation: FieldValidation): Promise<ApiResponse> {
  const { definition, info } = ctx;
  if (!applied.apiVersion || !applied.kind) throw errors.badRequest('an apply patch must carry apiVersion and kind');
  const object = withTypeMeta(requireObject(structuredClone(applied), definition), definition);
  ctx.warnings.push(...typeCheck(object, definition, validation));
  checkIdentity(ctx, object);
  object.metadata.name = info.name;
  recordApply(object, applied, manager, definition, '');
  return json(await createChecked(ctx, object), 201, ctx.warnings);
}

function patchOnce(ctx: RestContext, kind: PatchKind, current: KubeObject, patch: unknown, manager: string | undefined): KubeObject {
  const { definition, info } = ctx;
  // The patch functions build a new document and never modify their inputs, so the stored object is safe.
  if (kind !== 'apply') return applyPatchDocument(kind, current, patch, { kind: definition.kind, group: definition.group, name: info.name });
  let merged: KubeObject;
  try {
    merged = applyApplyPatch(current, patch);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw errors.invalid(definition.kind, definition.group, info.name, [{ type: 'FieldValueInvalid', field: 'patch', message: (err as Error).message }]);
  }
  recordApply(merged, patch as KubeObject, manager!, definition, info.subresource);
  return merged;
}
