// The four patch kinds the API server applies, one per request content type.
export { applyMergePatch } from './merge-patch.js';
export { applyJsonPatch, type JsonPatchLimits, type JsonPatchOperation } from './json-patch.js';
export { jsonByteLength, MAX_JSON_PATCH_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS, MAX_OBJECT_BYTES } from './limits.js';
export { applyStrategicMergePatch } from './strategic-merge-patch.js';
export { applyApplyPatch } from './apply-patch.js';
export { DEFAULT_MERGE_KEYS, compileMergeKeys, type CompiledMergeKeys, type ListMergeRule, type MergeKeyTable } from './merge-keys.js';
export { schemaMergeKeys } from './schema-merge-keys.js';
