// The checks every kind gets from its schema: `+enum` string fields hold one of their values, and
// `+required` fields are set — what Kubernetes' declarative validation says for every type.
import type { Schema } from '../schemas/language.js';
import type { StatusCause } from '../types.js';
import { notSupported, required } from '../validation/field.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function walk(schema: Schema, value: unknown, path: string, out: StatusCause[]): void {
  switch (schema.kind) {
    case 'string':
      if (schema.enum && typeof value === 'string' && !schema.enum.includes(value)) out.push(notSupported(path, value, schema.enum));
      return;
    case 'array':
      if (Array.isArray(value)) value.forEach((item, i) => walk(schema.items, item, `${path}[${i}]`, out));
      return;
    case 'map':
      if (isRecord(value)) for (const [key, item] of Object.entries(value)) walk(schema.values, item, `${path}[${key}]`, out);
      return;
    case 'object': {
      if (!isRecord(value)) return;
      for (const name of schema.required ?? []) {
        const field = schema.fields[name];
        // A required struct held by value is always there in Go; its own required fields speak for it.
        if (field?.kind === 'object' && !schema.fieldFacts?.[name]?.pointer) continue;
        const present = value[name];
        if (present === undefined || present === null || (field?.kind === 'string' && present === '')) out.push(required(join(path, name)));
      }
      for (const [key, item] of Object.entries(value)) {
        const field = schema.fields[key];
        if (field && item !== null && item !== undefined) walk(field, item, join(path, key), out);
      }
      return;
    }
    default:
      return;
  }
}

/** Enum and required-field causes for an object, in document order. */
export function validateAgainstSchema(schema: Schema, object: unknown): StatusCause[] {
  const out: StatusCause[] = [];
  walk(schema, object, '', out);
  return out;
}
