// Server-side apply (`application/apply-patch+yaml`, `kubectl apply --server-side`), simplified.
//
// Real server-side apply records which manager owns which field (`metadata.managedFields`), removes fields
// a manager stops applying, and reports conflicts with other managers. Skiff does not track ownership:
// applying a configuration is a strategic merge of it into the live object, with the same merge keys.
// So fields the configuration sets are updated, lists merge by key, fields other managers set are kept —
// and fields dropped from a configuration are kept too (set them to `null` to delete them), and no
// conflicts are ever reported.

import { errors } from '../errors.js';
import type { KubeObject } from '../types.js';
import { isJsonObject } from './json.js';
import { DEFAULT_MERGE_KEYS, type MergeKeyTable } from './merge-keys.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';

/**
 * Applies a configuration to the live object, or — when `target` is undefined, i.e. the object does not
 * exist yet — returns the object to create. Returns a new object; neither input is modified.
 */
export function applyApplyPatch<T extends object = KubeObject>(target: T | undefined, applied: unknown, mergeKeys: MergeKeyTable = DEFAULT_MERGE_KEYS): T {
  if (!isJsonObject(applied)) throw errors.badRequest('invalid apply patch: the configuration must be an object');
  return applyStrategicMergePatch((target ?? {}) as T, applied, mergeKeys);
}
