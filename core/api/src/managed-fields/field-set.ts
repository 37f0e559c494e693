// Field sets: which fields of an object a value sets, in server-side apply's terms (FieldsV1). Built from
// the kind's schema: struct fields are `f:<name>`; items of lists keyed by `+listMapKey` (or merged by
// `+patchMergeKey`) are `k:{"key":value}`; members of set lists are `v:<json>`; atomic lists, atomic structs
// and scalars are leaves. A node owned in its own right and holding children carries `.`.
import { isJsonObject } from '../guards.js';
import type { Schema } from '../schemas/language.js';

export class FieldSet {
  /** This path itself is a member (a leaf, or a list item that is owned as a whole as well as by field). */
  own = false;
  readonly children = new Map<string, FieldSet>();

  child(element: string): FieldSet {
    let node = this.children.get(element);
    if (!node) {
      node = new FieldSet();
      this.children.set(element, node);
    }
    return node;
  }

  get empty(): boolean {
    return !this.own && this.children.size === 0;
  }

  /** Every member path, depth first. */
  paths(prefix: string[] = []): string[][] {
    const out: string[][] = [];
    if (this.own) out.push(prefix);
    for (const [element, node] of this.children) out.push(...node.paths([...prefix, element]));
    return out;
  }

  /** Member paths with nothing below them: the values a set holds (list items held by key are structure). */
  leafPaths(prefix: string[] = []): string[][] {
    const out: string[][] = [];
    if (this.own && this.children.size === 0) out.push(prefix);
    for (const [element, node] of this.children) out.push(...node.leafPaths([...prefix, element]));
    return out;
  }

  has(path: readonly string[]): boolean {
    let node: FieldSet | undefined = path.length === 0 ? this : this.children.get(path[0]!);
    for (let i = 1; node && i < path.length; i++) node = node.children.get(path[i]!);
    return node?.own ?? false;
  }

  add(path: readonly string[]): void {
    const node = path.reduce<FieldSet>((parent, element) => parent.child(element), this);
    node.own = true;
  }

  /** Removes the member at `path` (children stay); prunes nodes left empty. */
  remove(path: readonly string[]): void {
    const walk = (node: FieldSet, depth: number): void => {
      if (depth === path.length) {
        node.own = false;
        return;
      }
      const next = node.children.get(path[depth]!);
      if (!next) return;
      walk(next, depth + 1);
      if (next.empty) node.children.delete(path[depth]!);
    };
    walk(this, 0);
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
  const key: Record<string, unknown> = {};
  for (const name of [...keys].sort()) if (item[name] !== undefined) key[name] = item[name];
  return `k:${JSON.stringify(key)}`;
}

function collect(schema: Schema | undefined, value: unknown, node: FieldSet, depth: number): void {
  if (depth > 64 || value === null || value === undefined) return;
  // Without a schema (or for free-form values): objects are granular maps, everything else a leaf, as
  // Kubernetes' deduced types have it.
  if (!schema || schema.kind === 'any') {
    if (isJsonObject(value) && Object.keys(value).length > 0)
      for (const [key, item] of Object.entries(value)) collect(undefined, item, node.child(`f:${key}`), depth + 1);
    else node.own = true;
    return;
  }
  switch (schema.kind) {
    case 'object': {
      if (!isJsonObject(value) || schema.structType === 'atomic') {
        node.own = true;
        return;
      }
      let any = false;
      for (const [key, item] of Object.entries(value)) {
        if (item === null || item === undefined) continue;
        any = true;
        const field = schema.fields[key];
        const child = node.child(`f:${key}`);
        if (field?.kind === 'array' && Array.isArray(item)) collectList(schema, key, field.items, item, child, depth);
        else collect(field, item, child, depth + 1);
      }
      if (!any) node.own = true;
      return;
    }
    case 'map': {
      if (!isJsonObject(value) || Object.keys(value).length === 0) {
        node.own = true;
        return;
      }
      for (const [key, item] of Object.entries(value)) collect(schema.values, item, node.child(`f:${key}`), depth + 1);
      return;
    }
    default:
      node.own = true;
  }
}

function collectList(owner: Schema, field: string, items: Schema, list: unknown[], node: FieldSet, depth: number): void {
  const keys = listKeysOf(owner, field);
  if (keys === undefined || list.length === 0) {
    node.own = true;
    return;
  }
  for (const item of list) {
    if (keys === 'set') node.child(`v:${JSON.stringify(item)}`).own = true;
    else if (isJsonObject(item)) {
      const child = node.child(itemElement(item, keys));
      child.own = true;
      collect(items, item, child, depth + 1);
    }
  }
}

/** The fields `value` sets, under `schema` (undefined: the whole value is one leaf). */
export function fieldSetOf(schema: Schema | undefined, value: unknown): FieldSet {
  const set = new FieldSet();
  collect(schema, value, set, 0);
  set.own = false;
  return set;
}

/** Reads the value at a field path; undefined when absent. */
export function valueAtPath(value: unknown, path: readonly string[]): unknown {
  let current: unknown = value;
  for (const element of path) {
    if (current === undefined || current === null) return undefined;
    const kind = element.slice(0, 2);
    const rest = element.slice(2);
    if (kind === 'f:') current = isJsonObject(current) ? current[rest] : undefined;
    else if (kind === 'k:') {
      const key = keyFields(rest);
      current = Array.isArray(current)
        ? current.find((item) => isJsonObject(item) && key.every(([k, v]) => JSON.stringify(item[k]) === JSON.stringify(v)))
        : undefined;
    } else if (kind === 'v:') {
      const wanted = rest;
      current = Array.isArray(current) ? current.find((item) => JSON.stringify(item) === wanted) : undefined;
    } else return undefined;
  }
  return current;
}

/** Removes the value at a field path from `value` (in place). */
export function removeAtPath(value: unknown, path: readonly string[]): void {
  if (path.length === 0) return;
  const parent = valueAtPath(value, path.slice(0, -1));
  const last = path[path.length - 1]!;
  const kind = last.slice(0, 2);
  const rest = last.slice(2);
  if (kind === 'f:' && isJsonObject(parent)) delete parent[rest];
  else if (Array.isArray(parent)) {
    const index =
      kind === 'k:'
        ? parent.findIndex((item) => {
            const key = keyFields(rest);
            return isJsonObject(item) && key.every(([k, v]) => JSON.stringify(item[k]) === JSON.stringify(v));
          })
        : parent.findIndex((item) => JSON.stringify(item) === rest);
    if (index >= 0) parent.splice(index, 1);
  }
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
