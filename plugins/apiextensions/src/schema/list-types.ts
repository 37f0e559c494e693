// x-kubernetes-list-type: `set` lists hold no value twice, `map` lists no two items with the same keys.
import type { StatusCause } from '@skiff/api';
import { duplicate, goJSON, invalid, paths } from './causes.js';
import { isPlainObject, type SchemaNode } from './node.js';

/** A comparable identity for a value: scalars by type and value, compound values by their JSON. */
function identity(value: unknown): string {
  if (value === undefined) return 'unspecified';
  return typeof value === 'object' && value !== null ? `json:${goJSON(value)}` : `${typeof value}:${String(value)}`;
}

/** Indexes of the second occurrence of every value seen more than once. */
function duplicateIndexes(values: readonly unknown[]): number[] {
  const seen = new Map<string, number>();
  const out: number[] = [];
  values.forEach((value, i) => {
    const id = identity(value);
    const times = seen.get(id) ?? 0;
    if (times === 1) out.push(i);
    seen.set(id, times + 1);
  });
  return out;
}

function validateListMap(path: string, node: SchemaNode, list: unknown[], out: StatusCause[]): void {
  for (let i = 0; i < list.length; i++) {
    if (list[i] !== null && !isPlainObject(list[i])) {
      out.push(invalid(paths.index(path, i), list[i], 'must be an object for an array of list-type map'));
      return;
    }
  }
  if (list.length <= 1) return;
  const keys = list.map((item) => {
    const key: Record<string, unknown> = {};
    if (isPlainObject(item)) for (const k of node.listMapKeys) if (k in item) key[k] = item[k];
    return key;
  });
  const comparable = node.listMapKeys.length === 1 ? keys.map((k) => k[node.listMapKeys[0]!]) : keys;
  for (const i of duplicateIndexes(comparable)) out.push(duplicate(paths.index(path, i), keys[i]));
}

function validateValue(path: string, node: SchemaNode, value: unknown, out: StatusCause[]): void {
  if (!node.listTypesBelow) return;
  if (Array.isArray(value)) {
    if (node.listType === 'set') {
      for (const i of duplicateIndexes(value)) out.push(duplicate(paths.index(path, i), value[i]));
    } else if (node.listType === 'map') {
      validateListMap(path, node, value, out);
    }
    if (node.items) value.forEach((item, i) => validateValue(paths.index(path, i), node.items!, item, out));
  } else if (isPlainObject(value)) {
    validateObject(path, node, value, out);
  }
}

function validateObject(path: string | undefined, node: SchemaNode, object: Record<string, unknown>, out: StatusCause[]): void {
  if (typeof node.additional === 'object') {
    for (const [key, value] of Object.entries(object)) validateValue(paths.key(path, key), node.additional, value, out);
  }
  if (node.properties) {
    for (const [key, value] of Object.entries(object)) {
      const sub = node.properties.get(key);
      if (sub) validateValue(paths.child(path, key), sub, value, out);
    }
  }
}

/** Duplicate entries of set and map lists in a custom resource. */
export function validateListTypes(root: SchemaNode, object: Record<string, unknown>): StatusCause[] {
  const out: StatusCause[] = [];
  if (root.listTypesBelow) validateObject(undefined, root, object, out);
  return out;
}
