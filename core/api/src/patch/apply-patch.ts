// The merge step of server-side apply (`application/apply-patch+yaml`, `kubectl apply --server-side`): the
// applied configuration laid over the live object — fields it sets are updated, lists merge by their keys,
// other fields are kept. Ownership (conflicts, fields a manager stops applying) is
// managed-fields/managers.ts's part.

import { errors } from '../errors.js';
import type { KubeObject } from '../types.js';
import { isJsonObject } from './json.js';
import { DEFAULT_MERGE_KEYS, type CompiledMergeKeys, type MergeKeyTable } from './merge-keys.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';

/**
 * Applies a configuration to the live object, or — when `target` is undefined, i.e. the object does not
 * exist yet — returns the object to create. Returns a new object; neither input is modified.
 */
export function applyApplyPatch<T extends object = KubeObject>(
  target: T | undefined,
  applied: unknown,
  mergeKeys: MergeKeyTable | CompiledMergeKeys = DEFAULT_MERGE_KEYS,
): T {
  if (!isJsonObject(applied)) throw errors.badRequest('invalid apply patch: the configuration must be an object');
  return applyStrategicMergePatch((target ?? {}) as T, applied, mergeKeys);
}
