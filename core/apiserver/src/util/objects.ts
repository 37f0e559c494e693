import { isJsonObject, type KubeObject } from '@skiff/api';

/**
 * A writable copy of the top level and of `metadata` of a (possibly frozen) object: enough for the API
 * server's own bookkeeping, without cloning the spec.
 */
export function withWritableMetadata(object: KubeObject): KubeObject {
  // `...{}` first in both: writes add members (managedFields) to the copies (docs/contributing.md, "Object spread").
  return { ...{}, ...object, metadata: { ...{}, ...object.metadata } };
}

/** Structural equality of JSON values; object key order does not matter. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (!isJsonObject(a) || !isJsonObject(b)) return false;
  let leftCount = 0;
  for (const key in a) {
    if (a[key] === undefined) continue;
    leftCount++;
    if (!jsonEqual(a[key], b[key])) return false;
  }
  let rightCount = 0;
  for (const key in b) if (b[key] !== undefined) rightCount++;
  return leftCount === rightCount;
}

/** Whether anything but `metadata` and `status` differs: the rule for bumping `metadata.generation`. */
export function specChanged(next: KubeObject, previous: KubeObject): boolean {
  const keys = new Set([...Object.keys(next), ...Object.keys(previous)]);
  for (const key of keys) {
    if (key === 'metadata' || key === 'status' || key === 'kind' || key === 'apiVersion') continue;
    if (!jsonEqual(next[key], previous[key])) return true;
  }
  return false;
}
