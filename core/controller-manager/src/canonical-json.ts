import { isJsonObject } from '@skiff/api';

/**
 * JSON with object keys sorted at every level (as Go writes maps), so equal values always serialise alike;
 * undefined members are left out and undefined array items become `null`, as `JSON.stringify` does.
 * For comparing objects whatever their key order, and for hashing them.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (isJsonObject(value)) {
    const members = Object.keys(value)
      .sort()
      .filter((key) => value[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}
