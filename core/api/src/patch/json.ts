// Small helpers for plain JSON values, shared by the patch implementations.
//
// Patches arrive from the network, so keys such as `__proto__` and `constructor` are ordinary data here:
// reads go through own properties only and writes define own properties, never touching a prototype.

import { isJsonObject } from '../guards.js';

export { isJsonObject };

export type JsonObject = Record<string, unknown>;

export function getOwn(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

export function setOwn(object: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

/** A deep copy of a JSON value that shares nothing with the original. */
export function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  const copy: JsonObject = {};
  if (isJsonObject(value)) for (const key of Object.keys(value)) setOwn(copy, key, cloneJson(value[key]));
  return copy as T;
}

/** JSON equality: same type and value, arrays element by element, objects key by key in any order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (!isJsonObject(a) || !isJsonObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}
