// What the built-in kinds share about writes: verbs, decoding, and how updates split spec from status.
import { decodeObject, type KubeObject, type ObjectMeta, type Schema } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/**
 * A definition's decode for a schema. Unknown fields are reported, never errors: the API server turns
 * them into a strict decoding error, warnings or nothing, as the request's fieldValidation asks. The
 * body is normalized like Kubernetes' typed decoding leaves it (unknown and null fields dropped).
 */
export function decoderFor(schema: Schema): NonNullable<ResourceDefinition['decode']> {
  return (object) => decodeObject(schema, object, { normalize: true });
}

/** Puts back `source[field]` (a copy, since the stored object may be shared), or removes the field. */
export function restore<T extends object>(target: T, source: T, field: keyof T): void {
  if (source[field] === undefined) delete target[field];
  else target[field] = structuredClone(source[field]);
}

/**
 * prepareForUpdate for kinds with a status subresource: a main-resource update (or any subresource
 * other than `status`) keeps the stored status; a `status` update keeps the stored spec and the
 * metadata fields the kind's status updates may not change.
 */
export function splitSpecAndStatus(metadataKeptOnStatusUpdate: readonly (keyof ObjectMeta)[] = []) {
  return (object: KubeObject, old: KubeObject, subresource: string): void => {
    if (subresource !== 'status') {
      restore(object, old, 'status');
      return;
    }
    restore(object, old, 'spec');
    for (const field of metadataKeptOnStatusUpdate) restore(object.metadata, old.metadata, field);
  };
}
