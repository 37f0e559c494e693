import { errors, type KubeObject } from '@skiff/api';
import type { ApiResponse } from '@skiff/kernel';
import { fieldValidationOf, requireObject, typeCheck, withTypeMeta } from '../pipeline/type-check.js';
import { guardedUpdate } from './commit-update.js';
import type { RestContext } from './context.js';
import { writePrecondition } from './resource-version.js';
import { json } from './respond.js';

/** PUT of an object or of its status subresource. */
export async function updateObject(ctx: RestContext, body: unknown): Promise<ApiResponse> {
  const { definition } = ctx;
  const object = withTypeMeta(requireObject(body, definition), definition);
  ctx.warnings.push(...typeCheck(object, definition, fieldValidationOf(ctx.request.query), ctx));
  checkIdentity(ctx, object);
  const conditional = writePrecondition(object.metadata.resourceVersion) !== undefined;
  // A retry after a concurrent write starts again from the body as sent: admission may have changed the
  // first attempt's copy, and froze it.
  const pristine = conditional ? undefined : structuredClone(object);
  let attempts = 0;
  const updated = await guardedUpdate(ctx, () => ({ object: attempts++ === 0 ? object : structuredClone(pristine!), conditional }));
  return json(updated, 200, ctx.warnings);
}

/** The name and namespace in the body must be those of the URL (or absent). */
export function checkIdentity(ctx: RestContext, object: KubeObject): void {
  const { info, definition } = ctx;
  const { name, namespace } = object.metadata;
  if (name && name !== info.name) throw errors.badRequest(`the name of the object (${name}) does not match the name on the URL (${info.name})`);
  if (definition.namespaced && namespace && namespace !== info.namespace)
    throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
}
