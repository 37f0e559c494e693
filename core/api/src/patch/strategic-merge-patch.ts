// Kubernetes strategic merge patch, `application/strategic-merge-patch+json`: what kubectl sends for
// client-side apply, `set image`, `set env`, `rollout restart|pause|resume`, `cordon` and plain
// `kubectl patch`. A JSON merge patch, except that:
//   - lists named in the merge-key table merge — objects by their merge key, primitives as a set — and
//     every other list is replaced;
//   - directives steer the merge:
//       `$patch: replace` (in a map: take it as given; as a list element: replace the whole list),
//       `$patch: delete` (in a map: delete the map; as a list element: delete the elements with its merge key),
//       `$patch: merge` (the default, accepted and ignored),
//       `$retainKeys: [...]` (clear the map's fields not listed),
//       `$setElementOrder/<list>: [...]` (the order of the merged list),
//       `$deleteFromPrimitiveList/<list>: [...]` (remove these values from a merged primitive list);
//   - `null` deletes a field, as in a merge patch.
// Directives never end up in the result, and neither do nulls inside new or replaced values (decoding into
// Kubernetes' typed objects drops them too).
//
// When the table has no rule for a list but the patch sends `$setElementOrder` for it, the client treated
// it as a merging list: the merge key is taken from the order list's elements (`[{"name": "web"}]` → name),
// so a gap in the table degrades to the client's view instead of silently dropping list elements.

import { errors } from '../errors.js';
import { cloneJson, getOwn, isJsonObject, jsonEqual, setOwn, type JsonObject } from './json.js';
import { orderMergedList } from './list-order.js';
import { compileMergeKeys, DEFAULT_MERGE_KEYS, type CompiledMergeKeys, type ListMergeRule, type MergeKeyTable } from './merge-keys.js';

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';

/** What a map-level `$patch: delete` evaluates to: the field holding the map goes away. */
const DELETED = Symbol('deleted');

function isDirectiveKey(key: string): boolean {
  return key === PATCH || key === RETAIN_KEYS || key.startsWith(SET_ELEMENT_ORDER) || key.startsWith(DELETE_FROM_PRIMITIVE_LIST);
}

function isDirectiveElement(item: unknown): item is JsonObject {
  return isJsonObject(item) && Object.hasOwn(item, PATCH);
}

function where(path: readonly string[], field?: string): string {
  const segments = field === undefined ? path : [...path, field];
  return segments.length === 0 ? 'the top level' : segments.join('.');
}

function invalid(message: string): never {
  throw errors.badRequest(`invalid strategic merge patch: ${message}`);
}

function unknownDirective(directive: unknown, path: readonly string[]): never {
  return invalid(`unknown $patch directive ${JSON.stringify(directive)} at ${where(path)}`);
}

/** A value taken as given (new, replaced, or in a replace-strategy list): copied without nulls and directives. */
function literal(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((item) => !isDirectiveElement(item)).map(literal);
  return isJsonObject(value) ? literalObject(value) : value;
}

function literalObject(value: JsonObject): JsonObject {
  const copy: JsonObject = {};
  for (const key of Object.keys(value)) {
    if (value[key] !== null && !isDirectiveKey(key)) setOwn(copy, key, literal(value[key]));
  }
  return copy;
}

function isComposite(value: unknown): boolean {
  return typeof value === 'object' && value !== null;
}

/** A `$setElementOrder/<field>` or `$deleteFromPrimitiveList/<field>` list, if the patch has one. */
function listDirective(patch: JsonObject, prefix: string, field: string, path: readonly string[]): unknown[] | undefined {
  const value = getOwn(patch, prefix + field);
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) invalid(`${prefix}${field} at ${where(path)} must be a list`);
  return value;
}

/** The fields a `$retainKeys` directive keeps, after checking that the patch sets no other field. */
function retainedKeys(patch: JsonObject, path: readonly string[]): Set<string> | undefined {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return undefined;
  const keys = patch[RETAIN_KEYS];
  if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'string')) {
    invalid(`$retainKeys at ${where(path)} must be a list of field names`);
  }
  const retained = new Set(keys);
  for (const key of Object.keys(patch)) {
    if (!isDirectiveKey(key) && patch[key] !== null && !retained.has(key)) {
      invalid(`"${key}" is set at ${where(path)} but missing from its $retainKeys`);
    }
  }
  return retained;
}

/** The merge rule `$setElementOrder` implies: primitives → a set; objects with one shared key → that key. */
function ruleFromOrder(order: readonly unknown[]): ListMergeRule | undefined {
  if (order.length === 0) return undefined;
  if (!order.some(isComposite)) return 'merge';
  const first = isJsonObject(order[0]) ? Object.keys(order[0]) : [];
  if (first.length !== 1) return undefined;
  const mergeKey = first[0]!;
  const shared = order.every((item) => isJsonObject(item) && Object.keys(item).length === 1 && Object.hasOwn(item, mergeKey));
  return shared ? { mergeKey } : undefined;
}

/** Checks that the patch list's items appear in `$setElementOrder` in the same relative order. */
function checkOrderMatches(
  items: readonly unknown[],
  order: readonly unknown[],
  identity: (item: unknown) => unknown,
  field: string,
  path: readonly string[],
): void {
  let position = 0;
  for (const item of items) {
    const id = identity(item);
    while (position < order.length && !jsonEqual(identity(order[position]), id)) position += 1;
    if (position === order.length) invalid(`the order of the ${field} list at ${where(path)} does not match $setElementOrder/${field}`);
    position += 1;
  }
}

/**
 * A map keyed by JSON value with `jsonEqual`'s meaning of "the same": scalars by value, objects and arrays by
 * their content (object members in any order). Lets list merges find elements by merge key in constant time.
 */
class KeyIndex<V> {
  private readonly scalars = new Map<unknown, V>();
  private readonly composites = new Map<string, V>();

  get(key: unknown): V | undefined {
    return isComposite(key) ? this.composites.get(canonicalJson(key)) : this.scalars.get(key);
  }

  has(key: unknown): boolean {
    return isComposite(key) ? this.composites.has(canonicalJson(key)) : this.scalars.has(key);
  }

  set(key: unknown, value: V): void {
    if (isComposite(key)) this.composites.set(canonicalJson(key), value);
    else this.scalars.set(key, value);
  }

  /** Sets `key` unless it is set already: the first of several equal keys wins. */
  setFirst(key: unknown, value: V): void {
    if (!this.has(key)) this.set(key, value);
  }
}

/** JSON text with object members sorted, so equal values (as jsonEqual sees them) give equal text. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) => {
    if (!isJsonObject(member)) return member;
    const sorted: JsonObject = {};
    for (const name of Object.keys(member).sort()) setOwn(sorted, name, member[name]);
    return sorted;
  });
}

class StrategicMerge {
  constructor(private readonly rules: CompiledMergeKeys) {}

  /** Merges `patch` into the map `original` (absent: merges into nothing, which still applies directives). */
  mergeMap(original: JsonObject | undefined, patch: JsonObject, path: readonly string[]): JsonObject | typeof DELETED {
    const directive = getOwn(patch, PATCH);
    if (directive === 'replace') return literalObject(patch);
    if (directive === 'delete') return DELETED;
    if (directive !== undefined && directive !== 'merge') unknownDirective(directive, path);
    return this.mergeFields(original, patch, path);
  }

  /** Merges the fields of a patch map without a `$patch` directive of its own. */
  private mergeFields(original: JsonObject | undefined, patch: JsonObject, path: readonly string[]): JsonObject {
    const retained = retainedKeys(patch, path);
    const base = original ?? {};
    const result: JsonObject = {};
    const put = (key: string, value: unknown) => {
      if (value !== undefined) setOwn(result, key, value);
    };
    for (const key of Object.keys(base)) {
      if (retained && !retained.has(key)) continue;
      const touched = Object.hasOwn(patch, key) || Object.hasOwn(patch, SET_ELEMENT_ORDER + key) || Object.hasOwn(patch, DELETE_FROM_PRIMITIVE_LIST + key);
      put(key, touched ? this.mergeField(base[key], patch, key, path) : cloneJson(base[key]));
    }
    for (const key of Object.keys(patch)) {
      if (!isDirectiveKey(key) && !Object.hasOwn(base, key)) put(key, this.mergeField(undefined, patch, key, path));
    }
    return result;
  }

  /** The new value of field `key` (undefined: the field is gone), with its list directives applied. */
  private mergeField(original: unknown, patch: JsonObject, key: string, path: readonly string[]): unknown {
    const order = listDirective(patch, SET_ELEMENT_ORDER, key, path);
    const deletions = listDirective(patch, DELETE_FROM_PRIMITIVE_LIST, key, path);
    let value: unknown;
    if (Object.hasOwn(patch, key)) {
      const change = patch[key];
      if (change === null) return undefined;
      value = this.mergeValue(original, change, key, path, order);
    } else {
      value = cloneJson(original);
      const rule = order && Array.isArray(original) ? this.ruleFor(path, key, order) : undefined;
      if (rule && Array.isArray(original)) {
        // Only the order changes.
        const mergeKey = rule !== 'merge' && original.some(isComposite) ? rule.mergeKey : undefined;
        value = this.orderList(value as unknown[], [], order, original, mergeKey, key, path);
      }
    }
    if (deletions && Array.isArray(value)) {
      const doomed = new KeyIndex<true>();
      for (const item of deletions) doomed.set(item, true);
      value = value.filter((item) => !doomed.has(item));
    }
    return value;
  }

  private mergeValue(original: unknown, change: unknown, key: string, path: readonly string[], order: unknown[] | undefined): unknown {
    if (isJsonObject(change)) {
      const merged = this.mergeMap(isJsonObject(original) ? original : undefined, change, [...path, key]);
      return merged === DELETED ? undefined : merged;
    }
    if (Array.isArray(change)) {
      const rule = this.ruleFor(path, key, order);
      if (!rule) return literal(change);
      return this.mergeList(Array.isArray(original) ? original : [], change, rule, key, path, order);
    }
    return change;
  }

  private ruleFor(path: readonly string[], key: string, order: unknown[] | undefined): ListMergeRule | undefined {
    return this.rules.ruleFor(path, key) ?? (order ? ruleFromOrder(order) : undefined);
  }

  private mergeList(
    original: unknown[],
    change: unknown[],
    rule: ListMergeRule,
    key: string,
    path: readonly string[],
    order: unknown[] | undefined,
  ): unknown[] {
    const items = change.filter((item) => !isDirectiveElement(item));
    const directives = change.filter(isDirectiveElement);
    if (directives.some((item) => item[PATCH] === 'replace')) return literal(items) as unknown[];

    const holdsComposites = original.some(isComposite) || items.some(isComposite);
    // Kubernetes merges by the elements' kind: a keyed list that holds primitives merges as a set.
    if (!holdsComposites) {
      this.checkDirectives(directives, undefined, key, path);
      const merged = [...new Set([...original, ...items])];
      return this.orderList(merged, items, order, original, undefined, key, path);
    }
    if (rule === 'merge') invalid(`the ${key} list at ${where(path)} merges as a set of primitive values, but holds objects or lists`);
    const { mergeKey } = rule;
    const deletedKeys = new KeyIndex<true>();
    for (const doomed of this.checkDirectives(directives, mergeKey, key, path)) deletedKeys.set(doomed, true);
    const keyOf = (item: unknown) => (isJsonObject(item) ? getOwn(item, mergeKey) : undefined);
    const elementPath = [...path, `${key}[]`];
    const merged: unknown[] = original.filter((item) => !deletedKeys.has(keyOf(item)));
    // Each merge key's first element, so that every patch item finds its match in constant time.
    const positions = new KeyIndex<number>();
    merged.forEach((item, i) => positions.setFirst(keyOf(item), i));
    const fresh = new Set<number>();
    for (const item of items) {
      if (!isJsonObject(item) || !Object.hasOwn(item, mergeKey)) {
        invalid(`every element of ${where(path, key)} needs the merge key "${mergeKey}", got ${JSON.stringify(item)}`);
      }
      const index = positions.get(item[mergeKey]) ?? -1;
      const existing = index >= 0 ? merged[index] : undefined;
      // Directive elements were taken out of `items` above, so the item merges field by field.
      const value = this.mergeFields(isJsonObject(existing) ? existing : undefined, item, elementPath);
      if (index >= 0) {
        merged[index] = value;
        fresh.add(index);
      } else {
        const added = merged.push(value) - 1;
        positions.setFirst(item[mergeKey], added);
        fresh.add(added);
      }
    }
    const result = merged.map((item, i) => (fresh.has(i) ? item : cloneJson(item)));
    return this.orderList(result, items, order, original, mergeKey, key, path);
  }

  /** Validates `$patch` list elements and returns the merge-key values that `$patch: delete` elements name. */
  private checkDirectives(directives: readonly JsonObject[], mergeKey: string | undefined, key: string, path: readonly string[]): unknown[] {
    const deletedKeys: unknown[] = [];
    for (const item of directives) {
      const directive = item[PATCH];
      if (directive === 'merge' || directive === 'replace') continue;
      if (directive !== 'delete') unknownDirective(directive, [...path, key]);
      if (mergeKey === undefined) invalid(`$patch: delete needs a merge key, and the ${key} list at ${where(path)} has none`);
      if (!Object.hasOwn(item, mergeKey)) invalid(`a $patch: delete element of ${where(path, key)} lacks the merge key "${mergeKey}"`);
      deletedKeys.push(item[mergeKey]);
    }
    return deletedKeys;
  }

  /**
   * Applies the element order — `$setElementOrder` when sent, otherwise the patch list's own order — to a
   * merged list whose elements are identified by `mergeKey` (undefined: by their value).
   */
  private orderList(
    merged: unknown[],
    items: unknown[],
    order: unknown[] | undefined,
    original: unknown[],
    mergeKey: string | undefined,
    key: string,
    path: readonly string[],
  ): unknown[] {
    const identity = mergeKey === undefined ? (item: unknown) => item : (item: unknown) => (isJsonObject(item) ? getOwn(item, mergeKey) : undefined);
    if (order) {
      if (mergeKey !== undefined && !order.every((item) => isJsonObject(item) && Object.hasOwn(item, mergeKey))) {
        invalid(`every element of $setElementOrder/${key} at ${where(path)} needs the merge key "${mergeKey}"`);
      }
      checkOrderMatches(items, order, identity, key, path);
    }
    return orderMergedList(merged, order ?? items, original, identity);
  }
}

function isCompiled(mergeKeys: MergeKeyTable | CompiledMergeKeys): mergeKeys is CompiledMergeKeys {
  return typeof mergeKeys.ruleFor === 'function';
}

/**
 * Applies a Kubernetes strategic merge patch. `mergeKeys` says which lists merge and by what key
 * (default: {@link DEFAULT_MERGE_KEYS}). Returns a new object that shares nothing with the inputs;
 * neither input is modified. A malformed patch is a 400 BadRequest.
 */
export function applyStrategicMergePatch<T extends object>(target: T, patch: unknown, mergeKeys: MergeKeyTable | CompiledMergeKeys = DEFAULT_MERGE_KEYS): T {
  if (!isJsonObject(patch)) invalid('the patch must be a JSON object');
  const rules = isCompiled(mergeKeys) ? mergeKeys : compileMergeKeys(mergeKeys);
  const merged = new StrategicMerge(rules).mergeMap(isJsonObject(target) ? target : undefined, patch, []);
  return (merged === DELETED ? {} : merged) as T;
}
