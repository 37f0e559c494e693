// The object size limit: nothing is stored that could not be sent back in a request body. Patches can build
// an object larger than the patch (a merge into a large object, defaults on many items, managed fields of many
// fields), so the limit is checked on what would be stored, not only on what was sent.
import { errors, type KubeObject } from '@skiff/api';
import { jsonByteLength, MAX_OBJECT_BYTES } from '@skiff/api/patch';
import type { RestContext } from './context.js';

function tooLarge(ctx: RestContext, what: string): Error {
  const { definition, info } = ctx;
  const kind = definition.group ? `${definition.kind}.${definition.group}` : definition.kind;
  return errors.requestEntityTooLarge(`${what} ${kind} "${info.name}" would be larger than the limit of ${MAX_OBJECT_BYTES} bytes`);
}

/**
 * The object's JSON size without its managed fields; a 413 when that alone passes the limit. Checked before
 * the managed fields of a write are worked out, so an object too large to store costs no more work.
 */
export function sizeWithoutManagedFields(ctx: RestContext, object: KubeObject, what = 'the'): number {
  const rest =
    object.metadata?.managedFields === undefined
      ? jsonByteLength(object, MAX_OBJECT_BYTES)
      : jsonByteLength({ ...{}, ...object, metadata: { ...{}, ...object.metadata, managedFields: undefined } }, MAX_OBJECT_BYTES);
  if (rest > MAX_OBJECT_BYTES) throw tooLarge(ctx, what);
  return rest;
}

/**
 * Makes the object to be stored fit the limit with its managed fields (`rest`: its size without them, from
 * {@link sizeWithoutManagedFields}). As Kubernetes does, an object too large only because of its managed fields
 * is stored without them — except for server-side apply, whose field ownership is the point of the request (413).
 */
export function fitManagedFields(ctx: RestContext, object: KubeObject, rest: number): void {
  const managedFields = object.metadata.managedFields;
  if (managedFields === undefined) return;
  // `,"managedFields":` joins them.
  const total = rest + jsonByteLength(managedFields, MAX_OBJECT_BYTES - rest) + '"managedFields":'.length + 1;
  if (total <= MAX_OBJECT_BYTES) return;
  if (ctx.managedFieldsRecorded) throw tooLarge(ctx, 'the');
  delete object.metadata.managedFields;
}

/** From this size up, each step of a write (type check, admission, managed fields, encoding) takes tens of milliseconds or more. */
const LARGE_OBJECT_BYTES = 256 * 1024;

/**
 * Between the steps of writing a large object, lets the event loop serve what is waiting (health checks, small
 * reads): the write then blocks other clients for its longest step, not for all of them together. Writes stay
 * safe across the pause: the store commits only on the revision the write was built on.
 */
export async function pauseIfLarge(bytes: number): Promise<void> {
  if (bytes >= LARGE_OBJECT_BYTES) await new Promise<void>((resolve) => setImmediate(resolve));
}
