// Server-side apply reads an applied configuration as a value of the kind's schema, and a field the schema
// does not declare makes that impossible: upstream's apply refuses the whole request, naming each such field
// by its field path (`.spec.unknownField`, `.spec.ports[containerPort=80,protocol="TCP"].foo`).
import { isJsonObject } from '../guards.js';
import type { Schema } from '../schemas/language.js';
import { formatFieldPath, itemElement, listKeysOf } from './field-set.js';

/** Deeper values are not walked (request bodies nest less; see MAX_NESTING_DEPTH). */
const MAX_DEPTH = 64;

/** Whether an object schema keeps fields it does not declare (a CRD's `x-kubernetes-preserve-unknown-fields`). */
function preservesUnknownFields(schema: Schema): boolean {
  return schema.openapi?.['x-kubernetes-preserve-unknown-fields'] === true;
}

/**
 * The field paths of `value` that `schema` does not declare, as server-side apply prints them; free-form
 * values (`any`, objects preserving unknown fields) hold anything.
 */
export function undeclaredFields(schema: Schema, value: unknown): string[] {
  const out: string[] = [];
  walk(schema, value, [], out, 0);
  return out;
}

function walk(schema: Schema, value: unknown, path: string[], out: string[], depth: number): void {
  if (depth > MAX_DEPTH || value === null || value === undefined) return;
  if (schema.kind === 'map' && isJsonObject(value)) {
    for (const key of Object.keys(value)) walk(schema.values, value[key], [...path, `f:${key}`], out, depth + 1);
    return;
  }
  if (schema.kind !== 'object' || !isJsonObject(value)) return;
  for (const key of Object.keys(value)) {
    const field = schema.fields[key];
    const fieldPath = [...path, `f:${key}`];
    if (field === undefined) {
      if (!preservesUnknownFields(schema)) out.push(formatFieldPath(fieldPath));
      continue;
    }
    const item = value[key];
    if (field.kind !== 'array') walk(field, item, fieldPath, out, depth + 1);
    else if (Array.isArray(item)) {
      const keys = listKeysOf(schema, key);
      item.forEach((element, i) => {
        const elementPath = keys === 'set' ? `v:${JSON.stringify(element)}` : keys && isJsonObject(element) ? itemElement(element, keys) : `i:${i}`;
        walk(field.items, element, [...fieldPath, elementPath], out, depth + 1);
      });
    }
  }
}
