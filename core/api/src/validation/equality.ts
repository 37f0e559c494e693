import { isJsonObject } from '../guards.js';

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/**
 * Deep equality as Kubernetes' semantic equality sees JSON: an absent field, null, an empty list and
 * an empty map are all "unset" and equal to each other; key order does not matter.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isEmpty(a) && isEmpty(b)) return true;
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => semanticEqual(item, b[i]));
  if (!isJsonObject(a) || !isJsonObject(b)) return false;
  for (const key of Object.keys(a)) if (!semanticEqual(a[key], b[key])) return false;
  for (const key of Object.keys(b)) if (!(key in a) && !isEmpty(b[key])) return false;
  return true;
}
