// Field sets: which fields of an object a value sets, in server-side apply's terms (FieldsV1). Built from
// the kind's schema: struct fields are `f:<name>`; items of lists keyed by `+listMapKey` (or merged by
// `+patchMergeKey`) are `k:{"key":value}`; members of set lists are `v:<json>`; atomic lists, atomic structs
// and scalars are leaves. A node owned in its own right and holding children carries `.`.
//
// Sets can be wide (a ConfigMap of 100,000 keys is one node of 100,000 children), so nothing here spreads a
// list of paths into arguments, and operations between sets walk only the paths both share. Walks that recurse
// follow the set's depth, which the request body limit (MAX_NESTING_DEPTH) bounds.
import { isJsonObject } from '../guards.js';
import type { Schema } from '../schemas/language.js';

/** The children of every leaf: most nodes of a set are leaves, and a map each would be most of its memory. */
const NO_CHILDREN: ReadonlyMap<string, FieldSet> = new Map();

export class FieldSet {
  /** This path itself is a member (a leaf, or a list item that is owned as a whole as well as by field). */
  own = false;
  private childMap?: Map<string, FieldSet>;

  /** The nodes below this one, by path element. */
  get children(): ReadonlyMap<string, FieldSet> {
    return this.childMap ?? NO_CHILDREN;
  }

  child(element: string): FieldSet {
    this.childMap ??= new Map();
    let node = this.childMap.get(element);
    if (!node) {
      node = new FieldSet();
      this.childMap.set(element, node);
    }
    return node;
  }

  private dropChild(element: string): void {
    this.childMap?.delete(element);
  }

  get empty(): boolean {
    return !this.own && this.children.size === 0;
  }

  /** Every member path, depth first. Walked without recursion: a set may hold hundreds of thousands of fields. */
  paths(prefix: string[] = []): string[][] {
    return this.collectPaths(prefix, (node) => node.own);
  }

  /** Member paths with nothing below them: the values a set holds (list items held by key are structure). */
  leafPaths(prefix: string[] = []): string[][] {
    return this.collectPaths(prefix, (node) => node.own && node.children.size === 0);
  }

  private collectPaths(prefix: string[], wanted: (node: FieldSet) => boolean): string[][] {
    const out: string[][] = [];
    // Children are pushed in reverse so they come off the stack in insertion order.
    const pending: [FieldSet, string[]][] = [[this, prefix]];
    while (pending.length > 0) {
      const [node, path] = pending.pop()!;
      if (wanted(node)) out.push(path);
      const children = [...node.children];
      for (let i = children.length - 1; i >= 0; i--) pending.push([children[i]![1], [...path, children[i]![0]]]);
    }
    return out;
  }

  has(path: readonly string[]): boolean {
    let node: FieldSet | undefined = path.length === 0 ? this : this.children.get(path[0]!);
    for (let i = 1; node && i < path.length; i++) node = node.children.get(path[i]!);
    return node?.own ?? false;
  }

  add(path: readonly string[]): void {
    path.reduce<FieldSet>((parent, element) => parent.child(element), this).own = true;
  }

  /** Removes the member at `path` (children stay); prunes nodes left empty. */
  remove(path: readonly string[]): void {
    const trail: FieldSet[] = [this];
    for (const element of path) {
      const next = trail[trail.length - 1]!.children.get(element);
      if (!next) return;
      trail.push(next);
    }
    trail[trail.length - 1]!.own = false;
    for (let depth = path.length; depth > 0 && trail[depth]!.empty; depth--) trail[depth - 1]!.dropChild(path[depth - 1]!);
  }

  /** Adds every member of `other` (sharing no nodes with it). */
  addAll(other: FieldSet): void {
    const pending: [FieldSet, FieldSet][] = [[this, other]];
    while (pending.length > 0) {
      const [into, from] = pending.pop()!;
      if (from.own) into.own = true;
      for (const [element, child] of from.children) pending.push([into.child(element), child]);
    }
  }

  /**
   * Removes every member `other` holds, as {@link remove} would one by one, and prunes nodes left empty; says
   * whether anything was removed. Only the paths both sets share are walked, so removing a large set from many
   * small ones costs what the small ones hold.
   */
  removeAll(other: FieldSet): boolean {
    let changed = false;
    const visit = (node: FieldSet, gone: FieldSet): void => {
      if (gone.own && node.own) {
        node.own = false;
        changed = true;
      }
      const [few, many] = node.children.size <= gone.children.size ? [node.children, gone.children] : [gone.children, node.children];
      for (const element of [...few.keys()]) {
        if (!many.has(element)) continue;
        const child = node.children.get(element)!;
        visit(child, gone.children.get(element)!);
        if (child.empty) node.dropChild(element);
      }
    };
    visit(this, other);
    return changed;
  }

  /** The members of this set that `other` does not hold, as a new set (built without copying this one first). */
  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    const visit = (node: FieldSet, theirs: FieldSet | undefined, into: FieldSet): void => {
      if (node.own && !theirs?.own) into.own = true;
      for (const [element, child] of node.children) {
        const part = new FieldSet();
        visit(child, theirs?.children.get(element), part);
        if (!part.empty) (into.childMap ??= new Map()).set(element, part);
      }
    };
    visit(this, other, out);
    return out;
  }

  /** The FieldsV1 JSON form. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (this.own && this.children.size > 0) out['.'] = {};
    for (const [element, node] of this.children) out[element] = node.toJSON();
    return out;
  }

  static fromJSON(value: unknown): FieldSet {
    const set = new FieldSet();
    const read = (node: FieldSet, json: unknown): void => {
      if (!isJsonObject(json)) return;
      const keys = Object.keys(json);
      if (keys.length === 0) node.own = true;
      for (const key of keys) {
        if (key === '.') node.own = true;
        else read(node.child(key), json[key]);
      }
    };
    read(set, value);
    set.own = false;
    return set;
  }
}

/** The key fields a `k:` element names (its text after `k:`), as name and value pairs. */
function keyFields(text: string): [string, unknown][] {
  const key: unknown = JSON.parse(text);
  return isJsonObject(key) ? Object.entries(key) : [];
}

/** How a list's items are identified: by key fields, as set members, or not at all (atomic). */
export function listKeysOf(owner: Schema | undefined, field: string): readonly string[] | 'set' | undefined {
  if (!owner || owner.kind !== 'object') return undefined;
  const facts = owner.fieldFacts?.[field];
  if (!facts) return undefined;
  if (facts.listType === 'map' && facts.listMapKeys?.length) return facts.listMapKeys;
  if (facts.listType === 'set') return 'set';
  if (facts.listType === 'atomic') return undefined;
  if (facts.patchStrategy?.split(',').includes('merge')) return facts.patchMergeKey ? [facts.patchMergeKey] : 'set';
  return undefined;
}

/** The `k:` element naming a list item by its key fields. */
export function itemElement(item: Record<string, unknown>, keys: readonly string[]): string {
  return keyElementOf(item, [...keys].sort());
}

function keyElementOf(item: Record<string, unknown>, sortedKeys: readonly string[]): string {
  const key: Record<string, unknown> = {};
  for (const name of sortedKeys) if (item[name] !== undefined) key[name] = item[name];
  return `k:${JSON.stringify(key)}`;
}

/** Two JSON values are the same value. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // Most values compared are scalars: different scalars, or a scalar and an object, are never the same.
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A member of an object, if it has one. */
function memberOf(value: unknown, key: string): unknown {
  return isJsonObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
}

/**
 * Builds the field set of a value and, when given the value it replaces (`compare`), the members whose value
 * changed: a leaf when its value differs from the same place in the old value, a structural member (a list
 * item held by its key) when it is new. Both come from one walk over the new value, with the old value read
 * alongside (lists of it indexed once), so a write of many fields costs one pass.
 */
class FieldCollector {
  readonly set = new FieldSet();
  readonly changed: FieldSet | undefined;
  /** The path of the node being collected, for recording changes. */
  private readonly path: string[] = [];
  /** The nodes of `changed` along `path` made so far (changed[0] is the root), so a change is recorded in place. */
  private readonly trail: FieldSet[] = [];

  constructor(compare: boolean) {
    this.changed = compare ? new FieldSet() : undefined;
    if (this.changed) this.trail.push(this.changed);
  }

  private enter(element: string): void {
    this.path.push(element);
  }

  private leave(): void {
    this.path.pop();
    if (this.trail.length > this.path.length + 1) this.trail.length = this.path.length + 1;
  }

  /** Records the node at `path`, plus `element` below it when given, as changed. */
  private markChanged(element?: string): void {
    let node = this.trail[this.trail.length - 1]!;
    for (let depth = this.trail.length - 1; depth < this.path.length; depth++) {
      node = node.child(this.path[depth]!);
      this.trail.push(node);
    }
    if (element === undefined) node.own = true;
    else node.child(element).own = true;
  }

  collect(schema: Schema | undefined, value: unknown, before: unknown, node: FieldSet, depth: number): void {
    if (depth > 64 || value === null || value === undefined) return;
    // Without a schema (or for free-form values): objects are granular maps, everything else a leaf, as
    // Kubernetes' deduced types have it.
    if (!schema || schema.kind === 'any') {
      if (isJsonObject(value) && Object.keys(value).length > 0) {
        for (const key of Object.keys(value)) this.member(undefined, key, value[key], before, node, depth);
      } else this.leaf(node, value, before);
      return;
    }
    switch (schema.kind) {
      case 'object': {
        if (!isJsonObject(value) || schema.structType === 'atomic') {
          this.leaf(node, value, before);
          return;
        }
        let any = false;
        for (const key of Object.keys(value)) {
          const item = value[key];
          if (item === null || item === undefined) continue;
          any = true;
          const field = schema.fields[key];
          if (field?.kind === 'array' && Array.isArray(item)) {
            const element = `f:${key}`;
            this.enter(element);
            this.collectList(schema, key, field.items, item, memberOf(before, key), node.child(element), depth);
            this.leave();
          } else this.member(field, key, item, before, node, depth);
        }
        if (!any) this.leaf(node, value, before);
        return;
      }
      case 'map': {
        if (!isJsonObject(value) || Object.keys(value).length === 0) {
          this.leaf(node, value, before);
          return;
        }
        for (const key of Object.keys(value)) this.member(schema.values, key, value[key], before, node, depth);
        return;
      }
      default:
        this.leaf(node, value, before);
    }
  }

  private member(schema: Schema | undefined, key: string, value: unknown, before: unknown, node: FieldSet, depth: number): void {
    const element = `f:${key}`;
    this.enter(element);
    this.collect(schema, value, memberOf(before, key), node.child(element), depth + 1);
    this.leave();
  }

  private leaf(node: FieldSet, value: unknown, before: unknown): void {
    node.own = true;
    if (this.changed && !sameJson(value, before)) this.markChanged();
  }

  private collectList(owner: Schema, field: string, items: Schema, list: unknown[], before: unknown, node: FieldSet, depth: number): void {
    const keys = listKeysOf(owner, field);
    if (keys === undefined || list.length === 0) {
      this.leaf(node, list, before);
      return;
    }
    const beforeList = this.changed && Array.isArray(before) ? before : [];
    if (keys === 'set') {
      const had = new Set(beforeList.map((item) => JSON.stringify(item)));
      for (const item of list) {
        const element = `v:${JSON.stringify(item)}`;
        node.child(element).own = true;
        if (this.changed && !had.has(element.slice(2))) this.markChanged(element);
      }
      return;
    }
    const sortedKeys = [...keys].sort();
    const beforeItems = new Map<string, unknown>();
    for (const item of beforeList) {
      if (!isJsonObject(item)) continue;
      const element = keyElementOf(item, sortedKeys);
      if (!beforeItems.has(element)) beforeItems.set(element, item);
    }
    // The first item of each element: what a path names when a list repeats a key.
    const firsts = new Map<string, { node: FieldSet; item: unknown }>();
    for (const item of list) {
      if (!isJsonObject(item)) continue;
      const element = keyElementOf(item, sortedKeys);
      const child = node.child(element);
      child.own = true;
      if (!firsts.has(element)) firsts.set(element, { node: child, item });
      this.enter(element);
      this.collect(items, item, beforeItems.get(element), child, depth + 1);
      this.leave();
    }
    if (!this.changed) return;
    // Whether an item is structure or a leaf is known once every item holding its key has been collected.
    for (const [element, first] of firsts) {
      const was = beforeItems.get(element);
      const differs = first.node.children.size === 0 ? !sameJson(first.item, was) : was === undefined;
      if (differs) this.markChanged(element);
    }
  }
}

/** The fields `value` sets, under `schema` (undefined: the whole value is one leaf). */
export function fieldSetOf(schema: Schema | undefined, value: unknown): FieldSet {
  const collector = new FieldCollector(false);
  collector.collect(schema, value, undefined, collector.set, 0);
  collector.set.own = false;
  return collector.set;
}

/**
 * The fields `after` sets (as {@link fieldSetOf}) and those of them a write from `before` to `after` changed:
 * leaves whose value differs, list items held by key that are new.
 */
export function fieldChangesOf(schema: Schema | undefined, after: unknown, before: unknown): { set: FieldSet; changed: FieldSet } {
  const collector = new FieldCollector(true);
  collector.collect(schema, after, before, collector.set, 0);
  collector.set.own = false;
  return { set: collector.set, changed: collector.changed! };
}

/** Reads the value at a field path; undefined when absent. */
export function valueAtPath(value: unknown, path: readonly string[]): unknown {
  return new FieldValues().at(value, path);
}

/**
 * Reads values at field paths, indexing each list the first time an item of it is asked for, so a walk over
 * many items of one list costs one pass over the list instead of one per item. The values must not change
 * while it is in use.
 */
export class FieldValues {
  /** Per list: per kind of element (`v`, or `k` and the key names), the first item of each element. */
  private readonly lists = new WeakMap<unknown[], Map<string, Map<string, unknown>>>();
  /** `k:` elements as the index spells them: key names sorted, values as JSON.stringify writes them. */
  private readonly keyElements = new Map<string, { names: string[]; element: string }>();

  /** The value of one element of a path under `value`; undefined when absent. */
  child(value: unknown, element: string): unknown {
    if (value === undefined || value === null) return undefined;
    if (element.startsWith('f:')) {
      const name = element.slice(2);
      return isJsonObject(value) && Object.hasOwn(value, name) ? value[name] : undefined;
    }
    if (!Array.isArray(value)) return undefined;
    if (element.startsWith('v:')) return this.index(value, 'v', (item) => JSON.stringify(item)).get(element.slice(2));
    if (!element.startsWith('k:')) return undefined;
    // Elements are usually spelled as itemElement spells them: then an index built for this list has them.
    const indexes = this.lists.get(value);
    if (indexes) {
      for (const [kind, items] of indexes) {
        const item = kind === 'v' ? undefined : items.get(element);
        if (item !== undefined) return item;
      }
    }
    const key = this.keyElement(element.slice(2));
    if (!key) return undefined;
    const items = this.index(value, `k${JSON.stringify(key.names)}`, (item) => (isJsonObject(item) ? itemElement(item, key.names) : undefined));
    return items.get(key.element);
  }

  at(value: unknown, path: readonly string[]): unknown {
    let current = value;
    for (const element of path) {
      if (current === undefined || current === null) return undefined;
      current = this.child(current, element);
    }
    return current;
  }

  private keyElement(text: string): { names: string[]; element: string } | undefined {
    let key = this.keyElements.get(text);
    if (!key) {
      let fields: Record<string, unknown>;
      try {
        const parsed: unknown = JSON.parse(text);
        if (!isJsonObject(parsed)) return undefined;
        fields = parsed;
      } catch {
        return undefined;
      }
      const names = Object.keys(fields).sort();
      key = { names, element: itemElement(fields, names) };
      this.keyElements.set(text, key);
    }
    return key;
  }

  private index(list: unknown[], kind: string, elementOf: (item: unknown) => string | undefined): Map<string, unknown> {
    let byKind = this.lists.get(list);
    if (!byKind) {
      byKind = new Map();
      this.lists.set(list, byKind);
    }
    let items = byKind.get(kind);
    if (!items) {
      items = new Map();
      for (const item of list) {
        const element = elementOf(item);
        if (element !== undefined && !items.has(element)) items.set(element, item);
      }
      byKind.set(kind, items);
    }
    return items;
  }
}

/**
 * Removes from `value` (in place) the value of every member of `set`: what removing each path, deepest first,
 * would do, in one walk. A list item goes once (its first match), like a removal by path.
 */
export function removeFieldPaths(value: unknown, set: FieldSet): void {
  const values = new FieldValues();
  const visit = (node: FieldSet, current: unknown): void => {
    const doomed: string[] = [];
    for (const [element, child] of node.children) {
      if (child.own) doomed.push(element);
      else visit(child, values.child(current, element));
    }
    if (doomed.length === 0) return;
    if (isJsonObject(current)) {
      for (const element of doomed) if (element.startsWith('f:')) delete current[element.slice(2)];
    } else if (Array.isArray(current)) {
      const remaining = new Set<unknown>();
      for (const element of doomed) {
        const item = values.child(current, element);
        if (item !== undefined) remaining.add(item);
      }
      let kept = 0;
      for (const item of current) {
        if (remaining.delete(item)) continue;
        current[kept++] = item;
      }
      current.length = kept;
    }
  };
  visit(set, value);
}

/** `.spec.template.spec.containers[name="web"].image`: a path as conflict messages print it. */
export function formatFieldPath(path: readonly string[]): string {
  let out = '';
  for (const element of path) {
    const kind = element.slice(0, 2);
    const rest = element.slice(2);
    if (kind === 'f:') out += `.${rest}`;
    else if (kind === 'k:') {
      out += `[${keyFields(rest)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    } else if (kind === 'v:') out += `[=${rest}]`;
    else if (kind === 'i:') out += `[${rest}]`;
    else out += `.${element}`;
  }
  return out;
}

/**
 * The FieldsV1 JSON of the fields `value` sets, built directly (what `fieldSetOf(...).toJSON()` gives, without
 * the tree in between): the create path's managed fields, on every create.
 */
export function fieldsV1Of(schema: Schema | undefined, value: unknown): Record<string, unknown> {
  return fieldsV1Node(schema, value, 0) ?? {};
}

/** The node of one value: `{}` for a leaf, an object of children otherwise; undefined for nothing. */
function fieldsV1Node(schema: Schema | undefined, value: unknown, depth: number): Record<string, unknown> | undefined {
  if (depth > 64 || value === null || value === undefined) return undefined;
  if (schema === undefined || schema.kind === 'any' || schema.kind === 'map' || (schema.kind === 'object' && schema.structType !== 'atomic')) {
    if (!isJsonObject(value)) return {};
    let out: Record<string, unknown> | undefined;
    for (const key in value) {
      const item = value[key];
      if (item === null || item === undefined) continue;
      let child: Record<string, unknown> | undefined;
      if (schema?.kind === 'object') {
        const field = schema.fields[key];
        child = field?.kind === 'array' && Array.isArray(item) ? listNode(schema, key, field.items, item, depth) : fieldsV1Node(field, item, depth + 1);
      } else child = fieldsV1Node(schema?.kind === 'map' ? schema.values : undefined, item, depth + 1);
      if (child) (out ??= {})[`f:${key}`] = child;
    }
    return out ?? {};
  }
  return {};
}

function listNode(owner: Schema, field: string, items: Schema, list: unknown[], depth: number): Record<string, unknown> {
  const keys = listKeysOf(owner, field);
  if (keys === undefined || list.length === 0) return {};
  const out: Record<string, unknown> = {};
  for (const item of list) {
    if (keys === 'set') out[`v:${JSON.stringify(item)}`] = {};
    else if (isJsonObject(item)) {
      const children = fieldsV1Node(items, item, depth + 1);
      out[itemElement(item, keys)] = children && Object.keys(children).length > 0 ? { '.': {}, ...children } : {};
    }
  }
  return out;
}
