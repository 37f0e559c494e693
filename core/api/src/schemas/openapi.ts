import type { ApiFieldFacts } from '../generated/facts.js';
import type { ObjectSchema, Schema } from './language.js';

/** The subset of an OpenAPI v3 schema object that Skiff's schemas produce. */
export interface OpenApiSchema {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, OpenApiSchema>;
  items?: OpenApiSchema;
  additionalProperties?: OpenApiSchema;
  allOf?: OpenApiSchema[];
  $ref?: string;
  default?: unknown;
  enum?: readonly string[];
  required?: readonly string[];
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: readonly string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-int-or-string'?: true;
  'x-kubernetes-preserve-unknown-fields'?: true;
  'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string }[];
}

export interface OpenApiOptions {
  /**
   * Called for every struct below the root: return a `$ref` target to reference it instead of
   * inlining it (kubectl explain follows `allOf: [{$ref}]`), or undefined to inline.
   */
  ref?: (object: ObjectSchema) => string | undefined;
}

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

/** Scalars Kubernetes publishes as named components, so `kubectl explain` prints `<Quantity>` and `<IntOrString>`. */
const NAMED_SCALARS: Record<string, OpenApiSchema> = {
  [QUANTITY]: { type: 'string' },
  [INT_OR_STRING]: { type: 'string', format: 'int-or-string', 'x-kubernetes-int-or-string': true },
};

/** The name Kubernetes gives a struct's schema in `components.schemas`: "io.k8s.api.core.v1.PodSpec". */
export function openApiComponentName(object: ObjectSchema): string {
  return `${object.package}.${object.name}`;
}

function withDescription(schema: OpenApiSchema, description: string | undefined): OpenApiSchema {
  return description ? { ...{}, ...schema, description } : schema;
}

/** What a field's generated facts add to its schema: list and map types, merge keys, the patch strategy, a default. */
function fieldExtensions(facts: ApiFieldFacts | undefined): OpenApiSchema {
  if (!facts) return {};
  const out: OpenApiSchema = {};
  if (facts.default !== undefined) out.default = facts.default;
  if (facts.listType) out['x-kubernetes-list-type'] = facts.listType;
  if (facts.listMapKeys) out['x-kubernetes-list-map-keys'] = facts.listMapKeys;
  if (facts.mapType) out['x-kubernetes-map-type'] = facts.mapType;
  if (facts.patchMergeKey) out['x-kubernetes-patch-merge-key'] = facts.patchMergeKey;
  if (facts.patchStrategy) out['x-kubernetes-patch-strategy'] = facts.patchStrategy;
  return out;
}

function objectSchema(object: ObjectSchema, options: OpenApiOptions): OpenApiSchema {
  const properties: Record<string, OpenApiSchema> = {};
  for (const [name, field] of Object.entries(object.fields)) {
    properties[name] = { ...{}, ...convert(field, options, true), ...fieldExtensions(object.fieldFacts?.[name]) };
  }
  return {
    type: 'object',
    ...(object.description ? { description: object.description } : {}),
    properties,
    ...(object.required?.length ? { required: object.required } : {}),
    ...(object.structType ? { 'x-kubernetes-map-type': object.structType } : {}),
    ...(object.gvk ? { 'x-kubernetes-group-version-kind': [{ ...object.gvk }] } : {}),
  };
}

function convert(schema: Schema, options: OpenApiOptions, nested: boolean): OpenApiSchema {
  if (schema.openapi) return withDescription({ ...schema.openapi }, schema.description);
  const d = schema.description;
  switch (schema.kind) {
    case 'string':
      return withDescription({ type: 'string', ...(schema.format ? { format: schema.format } : {}), ...(schema.enum ? { enum: schema.enum } : {}) }, d);
    case 'int32':
      return withDescription({ type: 'integer', format: 'int32' }, d);
    case 'int64':
      return withDescription({ type: 'integer', format: 'int64' }, d);
    case 'number':
      return withDescription({ type: 'number', format: 'double' }, d);
    case 'boolean':
      return withDescription({ type: 'boolean' }, d);
    case 'quantity':
      if (options.ref && nested) return withDescription({ allOf: [{ $ref: `#/components/schemas/${QUANTITY}` }] }, d);
      return withDescription({ ...NAMED_SCALARS[QUANTITY] }, d);
    case 'intOrString':
      if (options.ref && nested) return withDescription({ allOf: [{ $ref: `#/components/schemas/${INT_OR_STRING}` }] }, d);
      return withDescription({ ...NAMED_SCALARS[INT_OR_STRING] }, d);
    case 'time':
      return withDescription({ type: 'string', format: 'date-time' }, d);
    case 'any':
      return withDescription({ 'x-kubernetes-preserve-unknown-fields': true }, d);
    case 'array':
      return withDescription({ type: 'array', items: convert(schema.items, options, true) }, d);
    case 'map':
      return withDescription({ type: 'object', additionalProperties: convert(schema.values, options, true) }, d);
    case 'object': {
      const ref = nested ? options.ref?.(schema) : undefined;
      if (ref === undefined) return objectSchema(schema, options);
      // A field's own description wins over the referenced type's, as in Kubernetes' published specs.
      return withDescription({ allOf: [{ $ref: ref }] }, schema.description);
    }
  }
}

/** Converts a schema to an OpenAPI v3 schema object (type, properties, items, additionalProperties, format, description). */
export function toOpenApiSchema(schema: Schema, options: OpenApiOptions = {}): OpenApiSchema {
  return convert(schema, options, false);
}

function collectObjects(schema: Schema, into: Map<string, ObjectSchema>): void {
  switch (schema.kind) {
    case 'array':
      collectObjects(schema.items, into);
      return;
    case 'map':
      collectObjects(schema.values, into);
      return;
    case 'object': {
      // A schema published as given (a custom resource's own JSON schema) is inlined, never a component.
      if (schema.openapi) return;
      const name = openApiComponentName(schema);
      if (into.has(name)) return;
      into.set(name, schema);
      for (const field of Object.values(schema.fields)) collectObjects(field, into);
      return;
    }
    default:
      return;
  }
}

/**
 * Every struct reachable from the given schemas, as OpenAPI v3 `components.schemas` entries that
 * reference each other by `#/components/schemas/<name>` — what `kubectl explain` walks.
 */
export function toOpenApiComponents(roots: Schema[]): Record<string, OpenApiSchema> {
  const objects = new Map<string, ObjectSchema>();
  for (const root of roots) collectObjects(root, objects);
  const ref = (object: ObjectSchema) => `#/components/schemas/${openApiComponentName(object)}`;
  const components: Record<string, OpenApiSchema> = {};
  for (const [name, object] of [...objects].sort(([a], [b]) => a.localeCompare(b))) {
    components[name] = toOpenApiSchema(object, { ref });
  }
  const text = JSON.stringify(components);
  for (const [name, schema] of Object.entries(NAMED_SCALARS)) if (text.includes(`"#/components/schemas/${name}"`)) components[name] = { ...schema };
  return components;
}
