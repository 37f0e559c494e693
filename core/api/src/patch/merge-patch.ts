// JSON Merge Patch (RFC 7386), `application/merge-patch+json`: what `kubectl label`, `annotate`, `scale`
// and `patch --type=merge` send. Objects merge key by key, `null` deletes a key, anything else —
// arrays included — replaces the target value.

import { errors } from '../errors.js';
import { cloneJson, isJsonObject, setOwn, type JsonObject } from './json.js';

function merge(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return cloneJson(patch);
  const base = isJsonObject(target) ? target : {};
  const result: JsonObject = {};
  // Target keys first, in their order, so a patched object keeps its field order.
  for (const key of Object.keys(base)) {
    if (!Object.hasOwn(patch, key)) setOwn(result, key, cloneJson(base[key]));
    else if (patch[key] !== null) setOwn(result, key, merge(base[key], patch[key]));
  }
  for (const key of Object.keys(patch)) {
    if (!Object.hasOwn(base, key) && patch[key] !== null) setOwn(result, key, merge(undefined, patch[key]));
  }
  return result;
}

/**
 * Applies an RFC 7386 merge patch. Returns a new object that shares nothing with either input; neither
 * input is modified. The patch must be a JSON object (a Kubernetes object cannot be replaced by a scalar
 * or an array); anything else is a 400 BadRequest.
 */
export function applyMergePatch<T extends object>(target: T, patch: unknown): T {
  if (!isJsonObject(patch)) throw errors.badRequest('invalid merge patch: the patch must be a JSON object');
  return merge(target, patch) as T;
}
