// Pruning: fields a structural schema does not specify are dropped, as the API server drops them on
// decoding, and their paths are reported for the `unknown field "…"` warnings.
import { isPlainObject, type SchemaNode } from './node.js';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

const childPath = (parent: string, key: string) => (parent ? `${parent}.${key}` : key);

class Pruner {
  readonly unknown: string[] = [];

  prune(value: unknown, node: SchemaNode | undefined, path: string): void {
    if (node?.preserveUnknown) {
      this.keepUnknown(value, node, path);
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((item, i) => this.prune(item, node?.items, `${path}[${i}]`));
      return;
    }
    if (!isPlainObject(value)) return;
    for (const key of Object.keys(value)) {
      if (node?.embedded && META_FIELDS.has(key)) continue;
      const property = node?.properties?.get(key);
      if (property) {
        this.prune(value[key], property, childPath(path, key));
      } else if (node?.additional !== undefined) {
        this.prune(value[key], typeof node.additional === 'object' ? node.additional : undefined, childPath(path, key));
      } else {
        if (!META_FIELDS.has(key) || path !== '') this.unknown.push(childPath(path, key));
        delete value[key];
      }
    }
  }

  /** Below x-kubernetes-preserve-unknown-fields: unknown fields stay, the specified ones are still pruned. */
  private keepUnknown(value: unknown, node: SchemaNode | undefined, path: string): void {
    if (!node) return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => this.keepUnknown(item, node.items, `${path}[${i}]`));
      return;
    }
    if (!isPlainObject(value)) return;
    for (const key of Object.keys(value)) {
      if (node.embedded && META_FIELDS.has(key)) continue;
      const property = node.properties?.get(key);
      if (property) this.prune(value[key], property, childPath(path, key));
      else if (node.additional !== undefined) {
        this.prune(value[key], typeof node.additional === 'object' ? node.additional : undefined, childPath(path, key));
      }
    }
  }
}

/** Drops nulls of fields that are not nullable and have no default to replace them. */
function pruneNulls(value: unknown, node: SchemaNode | undefined, isRoot: boolean): void {
  if (Array.isArray(value)) {
    for (const item of value) pruneNulls(item, node?.items, false);
    return;
  }
  if (!isPlainObject(value)) return;
  for (const key of Object.keys(value)) {
    if (isRoot && META_FIELDS.has(key)) continue;
    const sub = node?.properties?.get(key) ?? (typeof node?.additional === 'object' ? node.additional : undefined);
    if (value[key] === null && sub && !sub.nullable && !sub.hasDefault) delete value[key];
    else pruneNulls(value[key], sub, false);
  }
}

/**
 * Prunes a custom resource in place (its root treated as an embedded resource, so apiVersion, kind and
 * metadata stay) and returns the dropped fields' paths, sorted.
 */
export function pruneObject(object: Record<string, unknown>, root: SchemaNode): string[] {
  const pruner = new Pruner();
  pruner.prune(object, root.embedded ? root : { ...{}, ...root, embedded: true }, '');
  pruneNulls(object, root, true);
  return pruner.unknown.sort();
}

/** Prunes a value below `node` (not a resource root) and returns the dropped paths: for checking defaults. */
export function pruneValue(value: unknown, node: SchemaNode, asResourceRoot: boolean): string[] {
  const pruner = new Pruner();
  pruner.prune(value, asResourceRoot && !node.embedded ? { ...{}, ...node, embedded: true } : node, '');
  return pruner.unknown;
}
