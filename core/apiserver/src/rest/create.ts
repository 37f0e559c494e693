import { errors, type KubeObject } from '@skiff/api';
import type { ApiResponse } from '@skiff/kernel';
import { admitWrite } from '../pipeline/admission.js';
import { fieldValidationOf, requireObject, typeCheck, withTypeMeta } from '../pipeline/type-check.js';
import { withWritableMetadata } from '../util/objects.js';
import type { RestContext } from './context.js';
import { recordWrite } from './field-managers.js';
import { createWithGeneratedName } from './generate-name.js';
import { runInitializers } from './initializers.js';
import { objectKey } from './keys.js';
import { prepareCreateMetadata } from './metadata.js';
import { fitManagedFields, pauseIfLarge, sizeWithoutManagedFields } from './object-size.js';
import { json } from './respond.js';
import { translateStoreError } from './store-errors.js';

/** POST to a collection: 201 with the stored object. */
export async function createObject(ctx: RestContext, body: unknown): Promise<ApiResponse> {
  const object = withTypeMeta(requireObject(body, ctx.definition), ctx.definition);
  if (object.metadata?.resourceVersion) throw errors.badRequest('resourceVersion should not be set on objects to be created');
  ctx.warnings.push(...typeCheck(object, ctx.definition, fieldValidationOf(ctx.request.query), ctx));
  return json(await createChecked(ctx, object), 201, ctx.warnings);
}

/**
 * Creates an object that already passed the type check: server-owned metadata, the definition's create
 * preparation, admission, initializers, then the store (skipped for dry runs). A name generated from
 * `generateName` that is taken is tried again with a new one, from the start.
 */
export async function createChecked(ctx: RestContext, object: KubeObject): Promise<KubeObject> {
  const { definition, info } = ctx;
  if (definition.namespaced && !info.namespace) throw errors.pathNotFound(info.path);
  if (object.metadata.name || !object.metadata.generateName) return createOnce(ctx, object);
  return createWithGeneratedName(object, definition, (candidate) => createOnce(ctx, candidate));
}

async function createOnce(ctx: RestContext, object: KubeObject): Promise<KubeObject> {
  const { definition, info } = ctx;
  prepareCreateMetadata(object, definition, info.namespace);
  definition.prepareForCreate?.(object);
  const admitted = await admitWrite(ctx, 'CREATE', object);
  const toStore = await runInitializers(withWritableMetadata(admitted), definition, ctx.core.initializers, 'CREATE');
  const size = sizeWithoutManagedFields(ctx, toStore);
  await pauseIfLarge(size);
  recordWrite(ctx, toStore, undefined);
  fitManagedFields(ctx, toStore, size);
  await pauseIfLarge(size);
  if (ctx.dryRun) return toStore;
  const name = toStore.metadata.name!;
  try {
    return (await ctx.core.store.create(objectKey(definition, info.namespace, name), toStore)).object;
  } catch (err) {
    throw translateStoreError(err, definition, name);
  }
}
