// The checks every kind gets from its schema: `+enum` string fields hold one of their values, and
// `+required` fields are set — what Kubernetes' declarative validation says for every type. Runs on every
// write: the path is kept as a stack of segments and only joined when a cause is reported.
import type { Schema } from '../schemas/language.js';
import type { StatusCause } from '../types.js';
import { notSupported, required } from '../validation/field.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `+required` strings that upstream's validation still lets be empty: a Condition's message is only length-checked. */
const EMPTY_ALLOWED: ReadonlySet<string> = new Set(['io.k8s.apimachinery.pkg.apis.meta.v1.Condition.message']);

/** Kinds whose upstream validation leaves their metav1 Conditions unchecked (a Service's status conditions). */
const UNCHECKED_CONDITIONS: ReadonlySet<string> = new Set(['Service']);
const CONDITION = 'io.k8s.apimachinery.pkg.apis.meta.v1.Condition';

class Walker {
  readonly causes: StatusCause[] = [];
  /** A struct (package.name) whose required fields are not checked in this object. */
  constructor(private readonly unchecked?: string) {}
  private readonly path: (string | number)[] = [];

  private at(last?: string): string {
    let out = '';
    const segments = last === undefined ? this.path : [...this.path, last];
    for (const segment of segments) {
      if (typeof segment === 'number') out += `[${segment}]`;
      else if (segment.startsWith('[')) out += segment;
      else out += out ? `.${segment}` : segment;
    }
    return out;
  }

  walk(schema: Schema, value: unknown): void {
    switch (schema.kind) {
      case 'string':
        if (schema.enum && typeof value === 'string' && !schema.enum.includes(value)) this.causes.push(notSupported(this.at(), value, schema.enum));
        return;
      case 'array':
        if (!Array.isArray(value) || !hasChecks(schema.items)) return;
        for (let i = 0; i < value.length; i++) {
          this.path.push(i);
          this.walk(schema.items, value[i]);
          this.path.pop();
        }
        return;
      case 'map':
        if (!isRecord(value) || !hasChecks(schema.values)) return;
        for (const key in value) {
          this.path.push(`[${key}]`);
          this.walk(schema.values, value[key]);
          this.path.pop();
        }
        return;
      case 'object': {
        if (!isRecord(value) || !hasChecks(schema)) return;
        if (schema.required && `${schema.package}.${schema.name}` !== this.unchecked) {
          for (const name of schema.required) {
            const field = schema.fields[name];
            // A required struct held by value is always there in Go; its own required fields speak for it.
            if (field?.kind === 'object' && !schema.fieldFacts?.[name]?.pointer) continue;
            const present = value[name];
            const emptyAllowed = present === '' && EMPTY_ALLOWED.has(`${schema.package}.${schema.name}.${name}`);
            if (present === undefined || present === null || (field?.kind === 'string' && present === '' && !emptyAllowed))
              this.causes.push(required(this.at(name)));
          }
        }
        for (const key in value) {
          const field = schema.fields[key];
          const item = value[key];
          if (field === undefined || item === null || item === undefined) continue;
          this.path.push(key);
          this.walk(field, item);
          this.path.pop();
        }
        return;
      }
      default:
        return;
    }
  }
}

const checked = new WeakMap<Schema, boolean>();

/** Whether anything below the schema can fail a check (an enum or a required field); cached per schema. */
function hasChecks(schema: Schema): boolean {
  const known = checked.get(schema);
  if (known !== undefined) return known;
  checked.set(schema, false); // cycles: assume none while deciding
  let result = false;
  switch (schema.kind) {
    case 'string':
      result = Boolean(schema.enum);
      break;
    case 'array':
      result = hasChecks(schema.items);
      break;
    case 'map':
      result = hasChecks(schema.values);
      break;
    case 'object':
      result = Boolean(schema.required?.length) || Object.values(schema.fields).some(hasChecks);
      break;
    default:
      result = false;
  }
  checked.set(schema, result);
  return result;
}

/** Enum and required-field causes for an object, in document order. */
export function validateAgainstSchema(schema: Schema, object: unknown): StatusCause[] {
  const walker = new Walker(schema.kind === 'object' && schema.gvk && UNCHECKED_CONDITIONS.has(schema.gvk.kind) ? CONDITION : undefined);
  walker.walk(schema, object);
  return walker.causes;
}
