// A small typed schema language for Kubernetes types. A schema says what JSON shape a field has and
// which Go type Kubernetes declares for it, so decoding errors read exactly like the API server's
// ("cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32").

import type { ApiFieldFacts } from '../generated/facts.js';
import { emptyDictionary } from './dictionary.js';

export type ScalarKind = 'string' | 'int32' | 'int64' | 'number' | 'boolean' | 'quantity' | 'intOrString' | 'time' | 'any';

interface SchemaBase {
  description?: string;
  /** The Go type named in decoding errors, when it differs from the kind's default ("v1.RestartPolicy"). */
  goType?: string;
  /** The values an `+enum` string type allows. */
  enum?: readonly string[];
  /** The OpenAPI `format` where it is not the kind's default (`byte` for []byte). */
  format?: string;
  /** Replaces the OpenAPI form this kind of schema would have (`{type: object}` for RawExtension). */
  openapi?: Record<string, unknown>;
}

export interface ScalarSchema extends SchemaBase {
  kind: ScalarKind;
}

export interface ArraySchema extends SchemaBase {
  kind: 'array';
  items: Schema;
}

export interface MapSchema extends SchemaBase {
  kind: 'map';
  values: Schema;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface ObjectSchema extends SchemaBase {
  kind: 'object';
  /** The Go struct name: "DeploymentSpec". */
  name: string;
  /** The OpenAPI package the struct lives in: "io.k8s.api.apps.v1". */
  package: string;
  fields: Readonly<Record<string, Schema>>;
  /** For top-level kinds: the group/version/kind OpenAPI tags the schema with. */
  gvk?: GroupVersionKind;
  /** Fields upstream marks `+required`. */
  required?: readonly string[];
  /** The generated facts of each field (list type and keys, patch strategy, map type…), where the schema came from them. */
  fieldFacts?: Readonly<Record<string, ApiFieldFacts>>;
  structType?: 'atomic' | 'granular';
}

export type Schema = ScalarSchema | ArraySchema | MapSchema | ObjectSchema;

/** A description, or options for the schema. */
export type SchemaOptions = string | SchemaBase;

export interface ObjectOptions extends SchemaBase {
  package: string;
  gvk?: GroupVersionKind;
}

function base(options: SchemaOptions | undefined): SchemaBase {
  if (options === undefined) return {};
  return typeof options === 'string' ? { description: options } : options;
}

function scalar(kind: ScalarKind) {
  return (options?: SchemaOptions): ScalarSchema => ({ kind, ...base(options) });
}

/** Schema constructors: `t.object('PodSpec', { containers: t.array(container) }, { package })`. */
export const t = Object.freeze({
  string: scalar('string'),
  int32: scalar('int32'),
  int64: scalar('int64'),
  number: scalar('number'),
  boolean: scalar('boolean'),
  /** A resource quantity ("500m", "1Gi", or a JSON number). */
  quantity: scalar('quantity'),
  /** An IntOrString: an int32 or a string ("25%"). */
  intOrString: scalar('intOrString'),
  /** A metav1.Time: an RFC 3339 string, or null. */
  time: scalar('time'),
  /** Anything: a sub-tree Skiff does not model, preserved as sent. */
  any: scalar('any'),
  array: (items: Schema, options?: SchemaOptions): ArraySchema => ({ kind: 'array', items, ...base(options) }),
  map: (values: Schema, options?: SchemaOptions): MapSchema => ({ kind: 'map', values, ...base(options) }),
  object: (name: string, fields: Record<string, Schema>, options: ObjectOptions): ObjectSchema => ({
    kind: 'object',
    name,
    fields: Object.freeze(Object.assign(emptyDictionary<Schema>(), fields)),
    ...options,
  }),
});

/**
 * Returns a constructor for the structs of one Go package, so schema files read like the Go types:
 * `const object = objectsIn('io.k8s.api.core.v1'); object('PodSpec', {...}, 'PodSpec is …')`.
 */
export function objectsIn(pkg: string) {
  return (name: string, fields: Record<string, Schema>, description?: string, gvk?: GroupVersionKind): ObjectSchema =>
    t.object(name, fields, { package: pkg, ...(description ? { description } : {}), ...(gvk ? { gvk } : {}) });
}

/** The Go type a schema decodes into, as Go prints it in errors: "int32", "[]v1.Container", "map[string]string". */
export function goTypeName(schema: Schema): string {
  if (schema.goType) return schema.goType;
  switch (schema.kind) {
    case 'string':
      return 'string';
    case 'int32':
      return 'int32';
    case 'int64':
      return 'int64';
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    case 'quantity':
      return 'resource.Quantity';
    case 'intOrString':
      return 'intstr.IntOrString';
    case 'time':
      return 'v1.Time';
    case 'any':
      return 'interface {}';
    case 'array':
      return `[]${goTypeName(schema.items)}`;
    case 'map':
      return `map[string]${goTypeName(schema.values)}`;
    case 'object':
      return `${schema.package.slice(schema.package.lastIndexOf('.') + 1)}.${schema.name}`;
  }
}
