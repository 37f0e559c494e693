// JSON values as CEL sees them through a schema: integers as int (bigint), numbers as double, objects as
// maps, lists as lists; below x-kubernetes-preserve-unknown-fields (no schema) whole numbers are ints.
import { celMap, type CelValue } from '@bufbuild/cel';
import type { SchemaNode } from '../node.js';
import { fieldNode, isPlainObject } from '../node.js';
import { valueList } from './lists.js';

/** Converted objects and lists of one validation, so a value shared by nested rules is converted once. */
export type ConversionCache = WeakMap<object, unknown>;

export function toCel(value: unknown, node: SchemaNode | undefined, cache: ConversionCache): unknown {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'number':
      return node?.type === 'number' || !Number.isInteger(value) ? value : BigInt(value);
    case 'string':
    case 'boolean':
      return value;
  }
  const cached = cache.get(value as object);
  if (cached !== undefined) return cached;
  let converted: unknown;
  if (Array.isArray(value)) {
    const items = node?.items;
    converted = valueList(value.map((item) => toCel(item, items, cache) as CelValue));
  } else if (isPlainObject(value)) {
    const map = new Map<string, unknown>();
    for (const [key, item] of Object.entries(value)) map.set(key, toCel(item, fieldNode(node, key), cache));
    converted = celMap(map as never);
  } else {
    converted = value;
  }
  cache.set(value as object, converted);
  return converted;
}
