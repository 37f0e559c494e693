// Defaulting: a property's default is applied when its parent object exists and the property is absent (or
// null without being nullable); then defaulting goes down into every present field and list item.
import { copyJSON, isPlainObject, type SchemaNode } from './node.js';

const ROOT_META = new Set(['apiVersion', 'kind', 'metadata']);

const nullToDefault = (value: unknown, node: SchemaNode | undefined) => value === null && node !== undefined && !node.nullable;

function applyDefaults(value: unknown, node: SchemaNode | undefined, isRoot: boolean): void {
  if (!node?.defaultsBelow) return;
  if (Array.isArray(value)) {
    const items = node.items;
    if (!items) return;
    for (let i = 0; i < value.length; i++) {
      if (nullToDefault(value[i], items)) value[i] = copyJSON(items.props.default ?? null);
      applyDefaults(value[i], items, false);
    }
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [name, sub] of node.defaulted) {
    if (isRoot && ROOT_META.has(name)) continue;
    if (!(name in value) || nullToDefault(value[name], sub)) value[name] = copyJSON(sub.props.default);
  }
  const additional = typeof node.additional === 'object' ? node.additional : undefined;
  for (const key of Object.keys(value)) {
    if (isRoot && ROOT_META.has(key)) continue;
    const property = node.properties?.get(key);
    if (property) {
      applyDefaults(value[key], property, false);
    } else if (additional) {
      if (nullToDefault(value[key], additional)) value[key] = copyJSON(additional.props.default ?? null);
      applyDefaults(value[key], additional, false);
    }
  }
}

/** Applies the defaults of `root` to a custom resource, in place; the root's apiVersion, kind and metadata are left alone. */
export function defaultObject(object: Record<string, unknown>, root: SchemaNode): void {
  applyDefaults(object, root, true);
}
