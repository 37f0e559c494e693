import { apiVersionOf, errors, type KubeObject, type ResourceDefinition } from '@skiff/api';
import { StoreError, type StoredObject } from '@skiff/store';
import { subresourceInfo } from '../discovery/subresources.js';
import { admitWrite } from '../pipeline/admission.js';
import { jsonEqual, specChanged, withWritableMetadata } from '../util/objects.js';
import type { RestContext } from './context.js';
import { deletionComplete } from './deletion-plan.js';
import { recordWrite } from './field-managers.js';
import { runInitializers } from './initializers.js';
import { objectKey } from './keys.js';
import { fitManagedFields, pauseIfLarge, sizeWithoutManagedFields } from './object-size.js';
import { readObject } from './read.js';
import { writePrecondition } from './resource-version.js';
import { CONFLICT_MESSAGE, translateStoreError } from './store-errors.js';

/**
 * Builds the next version of an object from the current one. `conditional` says the client pinned a
 * resourceVersion: a concurrent write is then the client's 409; otherwise the update is rebuilt on the new
 * current object and retried, as Kubernetes's GuaranteedUpdate does.
 */
export type UpdateBuilder = (current: StoredObject) => Promise<{ object: KubeObject; conditional: boolean }> | { object: KubeObject; conditional: boolean };

const MAX_ATTEMPTS = 5;

export async function guardedUpdate(ctx: RestContext, build: UpdateBuilder): Promise<KubeObject> {
  for (let attempt = 1; ; attempt++) {
    const current = await inServedVersion(ctx, await readObject(ctx, { includeUninitialized: true }));
    const { object, conditional } = await build(current);
    try {
      return await commitUpdate(ctx, current, object);
    } catch (err) {
      if (err instanceof StoreError && err.kind === 'Conflict' && !conditional && attempt < MAX_ATTEMPTS) continue;
      throw translateStoreError(err, ctx.definition, ctx.info.name);
    }
  }
}

/**
 * The stored object as the requested version shows it: a custom resource written before its CRD changed storage
 * version is converted first, so a patch applies to, and admission sees, the version the client asked for.
 */
async function inServedVersion(ctx: RestContext, current: StoredObject): Promise<StoredObject> {
  const { definition } = ctx;
  if (!definition.readConversion || current.object.apiVersion === apiVersionOf(definition)) return current;
  return { ...{}, ...current, object: await definition.readConversion(current.object) };
}

/**
 * The update rules, then the write: resourceVersion precondition (400 unparsable, 409 stale), server-owned
 * metadata kept, status kept on main-resource updates and only status taken on status updates, generation
 * bumped when anything but metadata and status changed (kinds keeping one; others keep the stored one), admission, initializers; an object being deleted
 * whose finalizers are now empty is removed; the object must fit the size limit; an update that changes nothing
 * writes nothing.
 */
export async function commitUpdate(ctx: RestContext, current: StoredObject, requested: KubeObject): Promise<KubeObject> {
  const { definition, info } = ctx;
  const old = current.object;
  const next = projectSubresource(definition, info.subresource, old, requested);
  const metadata = next.metadata;
  const precondition = writePrecondition(metadata.resourceVersion);
  if (precondition !== undefined && precondition !== current.revision)
    throw errors.conflict(definition.resource, definition.group, info.name, CONFLICT_MESSAGE);
  if (metadata.uid && metadata.uid !== old.metadata.uid)
    throw errors.conflict(
      definition.resource,
      definition.group,
      info.name,
      `Precondition failed: UID in precondition: ${metadata.uid}, UID in object meta: ${old.metadata.uid}`,
    );
  metadata.name = old.metadata.name;
  if (definition.namespaced) metadata.namespace = old.metadata.namespace;
  metadata.uid = old.metadata.uid;
  metadata.creationTimestamp = old.metadata.creationTimestamp;
  metadata.resourceVersion = old.metadata.resourceVersion;
  copyOrDelete(metadata, old.metadata, 'deletionTimestamp');
  copyOrDelete(metadata, old.metadata, 'deletionGracePeriodSeconds');
  if (metadata.managedFields === undefined && old.metadata.managedFields) metadata.managedFields = old.metadata.managedFields;
  // The main resource cannot write status; subresource handlers (scale, finalize, approval) build on the stored object.
  if (definition.hasStatus && info.subresource === '') {
    if (old.status === undefined) delete next.status;
    else next.status = old.status;
  }
  definition.prepareForUpdate?.(next, old, info.subresource);
  if (definition.generation === false) copyOrDelete(metadata, old.metadata, 'generation');
  else metadata.generation = (old.metadata.generation ?? 1) + (specChanged(next, old) ? 1 : 0);

  const admitted = await admitWrite(ctx, 'UPDATE', next, old);
  const object = await runInitializers(withWritableMetadata(admitted), definition, ctx.core.initializers, 'UPDATE');
  const key = objectKey(definition, info.namespace, info.name);
  if (deletionComplete(definition, object)) {
    recordWrite(ctx, object, old);
    if (ctx.dryRun) return object;
    return (await ctx.core.store.delete(key, { expectedRevision: current.revision })).object;
  }
  const size = sizeWithoutManagedFields(ctx, object);
  await pauseIfLarge(size);
  recordWrite(ctx, object, old);
  fitManagedFields(ctx, object, size);
  await pauseIfLarge(size);
  if (ctx.dryRun) return object;
  if (jsonEqual(object, old)) return old;
  return (await ctx.core.store.update(key, object, { expectedRevision: current.revision })).object;
}

/**
 * Subresource updates change one part: `status` the status, a namespace's `finalize` its spec.finalizers —
 * both with the metadata (labels, annotations, finalizers, owners), which upstream's strategies take from the
 * request (a kind's prepareForUpdate puts back what it keeps) — and other parts (pods' ephemeralcontainers,
 * resize) the part of the spec the kind's prepareForUpdate keeps. The resourceVersion still guards them.
 * Handlers building the whole object themselves (scale, approval) pass it through. The stored object is
 * copied because defaulting and admission run on the result and must not touch the original.
 */
function projectSubresource(definition: ResourceDefinition, subresource: string, old: KubeObject, requested: KubeObject): KubeObject {
  if (subresource === '' || !subresourceInfo(definition, subresource).part) return requested;
  const next = structuredClone(old);
  next.metadata.resourceVersion = requested.metadata.resourceVersion;
  if (subresource === 'status' || subresource === 'finalize') next.metadata = structuredClone(requested.metadata ?? {});
  if (subresource === 'status') {
    if (requested.status === undefined) delete next.status;
    else next.status = requested.status;
  } else if (subresource === 'finalize') {
    const finalizers = (requested.spec as { finalizers?: string[] } | undefined)?.finalizers;
    next.spec = { ...{}, ...(next.spec as object), finalizers: finalizers ?? [] };
  } else {
    // Other parts of the spec (pods' ephemeralcontainers, resize): the requested spec, narrowed by the kind's prepareForUpdate.
    next.spec = structuredClone(requested.spec);
  }
  return next;
}

function copyOrDelete<K extends keyof KubeObject['metadata']>(target: KubeObject['metadata'], source: KubeObject['metadata'], field: K): void {
  if (source[field] === undefined) delete target[field];
  else target[field] = source[field];
}
