import { ApiError, errorMessage, errors } from '@skiff/api';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, DEFAULT_MERGE_KEYS, schemaMergeKeys } from '@skiff/api/patch';
import { type ObjectSchema } from '@skiff/api/schema';
import { MEDIA_TYPE } from '../pipeline/decode-body.js';
import { writePrecondition } from './resource-version.js';

export type PatchKind = 'merge' | 'strategic' | 'json' | 'apply';

const KIND_BY_MEDIA_TYPE: Record<string, PatchKind> = {
  [MEDIA_TYPE.MERGE_PATCH]: 'merge',
  [MEDIA_TYPE.STRATEGIC_MERGE_PATCH]: 'strategic',
  [MEDIA_TYPE.JSON_PATCH]: 'json',
  [MEDIA_TYPE.APPLY_PATCH]: 'apply',
};

export function patchKindOf(mediaType: string, contentType: string | undefined, definition?: { strategicMergePatch?: boolean }): PatchKind {
  const kind = KIND_BY_MEDIA_TYPE[mediaType];
  if (!kind) throw errors.unsupportedMediaType(contentType ?? mediaType);
  if (kind === 'strategic' && definition?.strategicMergePatch === false)
    throw errors.unsupportedMediaType(contentType ?? mediaType, [MEDIA_TYPE.JSON_PATCH, MEDIA_TYPE.MERGE_PATCH, MEDIA_TYPE.APPLY_PATCH]);
  return kind;
}

/** The patch body has the shape its type needs: a list of operations for JSON patch, an object otherwise. */
export function checkPatchShape(kind: PatchKind, patch: unknown): void {
  if (patch === undefined) throw errors.badRequest('the patch body is empty');
  if (kind === 'json') {
    if (!Array.isArray(patch)) throw errors.badRequest('a JSON patch (application/json-patch+json) must be a list of operations');
  } else if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw errors.badRequest(`a ${kind} patch must be an object`);
  }
}

/**
 * Applies a merge, strategic-merge or JSON patch to a document (apply patches are merged by the caller,
 * which also records field ownership). A patch that cannot be applied (a failed JSON-patch test, a path
 * that does not exist) is the client's mistake: 422 naming the patch.
 */
export function applyPatchDocument<T extends object>(
  kind: Exclude<PatchKind, 'apply'>,
  target: T,
  patch: unknown,
  describe: { kind: string; group: string; name: string; schema?: ObjectSchema },
): T {
  try {
    switch (kind) {
      case 'merge':
        return applyMergePatch(target, patch) as T;
      case 'strategic':
        // Lists merge as the kind's schema says (its patch strategies and merge keys).
        return applyStrategicMergePatch(target, patch, describe.schema ? schemaMergeKeys(describe.schema) : DEFAULT_MERGE_KEYS) as T;
      case 'json':
        return applyJsonPatch(target, patch) as T;
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw errors.invalid(describe.kind, describe.group, describe.name, [{ type: 'FieldValueInvalid', field: 'patch', message: errorMessage(err) }]);
  }
}

/** Whether the patch itself names a resourceVersion: then a concurrent write is a 409, not a retry. */
export function pinsResourceVersion(kind: PatchKind, patch: unknown): boolean {
  if (kind === 'json') return (patch as { path?: unknown }[]).some((operation) => operation?.path === '/metadata/resourceVersion');
  return writePrecondition((patch as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion) !== undefined;
}
