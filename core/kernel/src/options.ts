import { isJsonObject } from '@skiff/api';

/**
 * Plugin option schemas: a small JSON Schema subset, enough to describe plugin options and to say
 * exactly which option is wrong. Defaults are filled in.
 */
export type OptionsSchema =
  | { type: 'string'; enum?: readonly string[]; pattern?: string; default?: string; description?: string }
  | { type: 'number' | 'integer'; minimum?: number; maximum?: number; default?: number; description?: string }
  | { type: 'boolean'; default?: boolean; description?: string }
  | { type: 'array'; items?: OptionsSchema; default?: readonly unknown[]; description?: string }
  | {
      type: 'object';
      properties?: { readonly [name: string]: OptionsSchema };
      required?: readonly string[];
      additionalProperties?: boolean | OptionsSchema;
      default?: Readonly<Record<string, unknown>>;
      description?: string;
    };

/** No properties (an intersection with it adds nothing). */
type EmptyObject = Record<never, never>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/**
 * Keys of an object schema that are always there once checked: required ones, ones with a default,
 * and objects (checkOptions fills an absent object in as `{}`).
 */
type PresentKeys<S> = S extends { properties: infer P }
  ? {
      [K in keyof P]: P[K] extends { default: unknown } | { type: 'object' }
        ? K
        : S extends { required: readonly (infer R)[] }
          ? K extends R
            ? K
            : never
          : never;
    }[keyof P]
  : never;

type ObjectOf<S> = S extends { properties: infer P }
  ? Simplify<
      { -readonly [K in keyof P & PresentKeys<S>]: OptionsOf<P[K]> } & { -readonly [K in Exclude<keyof P, PresentKeys<S>>]?: OptionsOf<P[K]> } & AdditionalOf<S>
    >
  : AdditionalOf<S> extends Record<string, never>
    ? Record<string, never>
    : AdditionalOf<S>;

type AdditionalOf<S> = S extends { additionalProperties: infer A }
  ? A extends true
    ? Record<string, unknown>
    : A extends OptionsSchema
      ? Record<string, OptionsOf<A>>
      : EmptyObject
  : EmptyObject;

/**
 * The options a plugin's `apply` receives, derived from its schema (declared once, `as const`-free:
 * `definePlugin` infers the literal schema): strings (an `enum` becomes a union), numbers, booleans,
 * arrays and objects; properties that are required or have a default are always present.
 */
export type OptionsOf<S> = S extends { type: 'string'; enum: readonly (infer E)[] }
  ? E
  : S extends { type: 'string' }
    ? string
    : S extends { type: 'number' | 'integer' }
      ? number
      : S extends { type: 'boolean' }
        ? boolean
        : S extends { type: 'array'; items: infer I }
          ? OptionsOf<I>[]
          : S extends { type: 'array' }
            ? unknown[]
            : S extends { type: 'object' }
              ? ObjectOf<S>
              : never;

/** Returns the options with defaults applied, or throws a message naming the option path and what was expected. */
export function checkOptions(schema: OptionsSchema, value: unknown, path = 'options'): unknown {
  if (value === undefined && 'default' in schema && schema.default !== undefined) value = structuredClone(schema.default);
  if (value === undefined && schema.type === 'object') value = {};
  if (value === undefined) return undefined;
  const fail: (expected: string) => never = (expected) => {
    throw new Error(`option "${path}" must be ${expected} (got ${JSON.stringify(value)})`);
  };
  switch (schema.type) {
    case 'string':
      if (typeof value !== 'string') fail('a string');
      if (schema.enum && !schema.enum.includes(value)) fail(`one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`);
      if (schema.pattern && !new RegExp(schema.pattern).test(value)) fail(`a string matching /${schema.pattern}/`);
      return value;
    case 'number':
    case 'integer':
      if (typeof value !== 'number' || Number.isNaN(value)) fail(`a ${schema.type}`);
      if (schema.type === 'integer' && !Number.isInteger(value)) fail('an integer');
      if (schema.minimum !== undefined && value < schema.minimum) fail(`>= ${schema.minimum}`);
      if (schema.maximum !== undefined && value > schema.maximum) fail(`<= ${schema.maximum}`);
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') fail('a boolean');
      return value;
    case 'array':
      if (!Array.isArray(value)) fail('an array');
      return schema.items ? value.map((v, i) => checkOptions(schema.items!, v, `${path}[${i}]`)) : value;
    case 'object': {
      if (!isJsonObject(value)) return fail('an object');
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) {
        if (value[key] === undefined && schema.properties?.[key]?.default === undefined)
          throw new Error(`option "${path === 'options' ? key : `${path}.${key}`}" is required`);
      }
      for (const [key, sub] of Object.entries(schema.properties ?? {})) {
        const v = checkOptions(sub, value[key], path === 'options' ? key : `${path}.${key}`);
        if (v !== undefined) out[key] = v;
      }
      for (const [key, v] of Object.entries(value)) {
        if (schema.properties && key in schema.properties) continue;
        const extra = schema.additionalProperties ?? false;
        const where = path === 'options' ? key : `${path}.${key}`;
        if (extra === false) {
          const known = Object.keys(schema.properties ?? {});
          throw new Error(`unknown option "${where}"${known.length ? ` (known: ${known.join(', ')})` : ' (this plugin takes no options)'}`);
        }
        out[key] = extra === true ? v : checkOptions(extra, v, where);
      }
      return out;
    }
  }
}
