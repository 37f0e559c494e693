// OpenAPI v2 (Swagger 2.0) from the same schemas as the v3 documents: JSON, and the protobuf form kubectl
// asks for (gnostic's openapi_v2.Document). kubectl reads its `definitions` for `explain
// --output plaintext-openapiv2`, and 1.27/1.28 fetch it before every apply. Field numbers are gnostic's
// OpenAPIv2.proto: Document (swagger 1, info 2, paths 8, definitions 9), Schema (_ref 1, format 2,
// description 4, default 5, required 19, enum 20, additional_properties 21, type 22, items 23,
// properties 25, vendor_extension 31).
import { isJsonObject } from '@skiff/api';
import { WIRE_TYPE, WireWriter } from '@skiff/api/protobuf';
import { toOpenApiComponents, type OpenApiSchema } from '@skiff/api/schema';
import type { ResourceDefinition } from '@skiff/kernel';
import { stringify } from 'yaml';
import type { GroupVersions } from './groups.js';
import { GIT_VERSION } from './version.js';

const V3_REF = '#/components/schemas/';
const V2_REF = '#/definitions/';

type V2Schema = Record<string, unknown>;

/** A v3 schema in v2's words: `$ref` in place of a lone `allOf: [{$ref}]`, refs into `definitions`. */
function toV2(schema: OpenApiSchema | undefined): V2Schema | undefined {
  if (!schema) return undefined;
  const out: V2Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    const loneRef = key === 'allOf' && schema.allOf?.length === 1 ? schema.allOf[0]!.$ref : undefined;
    if (loneRef) out.$ref = v2Ref(loneRef);
    else if (key === '$ref' && schema.$ref !== undefined) out.$ref = v2Ref(schema.$ref);
    else if (key === 'properties' && schema.properties)
      out.properties = Object.fromEntries(Object.entries(schema.properties).map(([name, child]) => [name, toV2(child)]));
    else if (key === 'items' || key === 'additionalProperties') out[key] = toV2(schema[key]);
    else out[key] = value;
  }
  return out;
}

function v2Ref(ref: string): string {
  return ref.startsWith(V3_REF) ? V2_REF + ref.slice(V3_REF.length) : ref;
}

/** Every served kind's schema and what it references, as v2 `definitions`. */
export function v2Definitions(groups: GroupVersions[]): Record<string, V2Schema> {
  const definitions = groups.flatMap((entry) => [...entry.resources.values()].flat());
  const schemas = definitions.flatMap((definition: ResourceDefinition) => (definition.schema ? [definition.schema] : []));
  const components = toOpenApiComponents(schemas);
  return Object.fromEntries(Object.entries(components).map(([name, schema]) => [name, toV2(schema)!]));
}

export type OpenApiV2Format = 'json' | 'protobuf';

/** The media types /openapi/v2 is served as (`type/subtype`), in the order a wildcard picks them. */
const V2_MEDIA_TYPES: readonly (readonly [string, string, OpenApiV2Format])[] = [
  ['application', 'json', 'json'],
  ['application', 'com.github.proto-openapi.spec.v2@v1.0+protobuf', 'protobuf'],
  ['application', 'com.github.proto-openapi.spec.v2.v1.0+protobuf', 'protobuf'],
];

interface AcceptClause {
  type: string;
  subtype: string;
  q: number;
}

function acceptClauses(accept: string): AcceptClause[] {
  const clauses: AcceptClause[] = [];
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';');
    const [type = '', subtype, extra] = range
      .trim()
      .split('/')
      .map((piece) => piece.trim());
    if (extra !== undefined || (subtype === undefined && type !== '*')) continue;
    const q = params.map((param) => param.split('=')).find(([name]) => name?.trim() === 'q')?.[1];
    clauses.push({ type, subtype: subtype ?? '*', q: q === undefined ? 1 : Number.parseFloat(q) || 0 });
  }
  // Highest quality first; among equals a concrete type before a wildcard.
  const specificity = (clause: AcceptClause) => (clause.type === '*' ? 0 : clause.subtype === '*' ? 1 : 2);
  return clauses.sort((a, b) => b.q - a.q || specificity(b) - specificity(a));
}

/**
 * Which form of /openapi/v2 an Accept header asks for, as kube-apiserver negotiates it: the first served
 * type matching the best clause, JSON for no header or a wildcard; undefined when none matches (406).
 */
export function openApiV2Format(accept: string | undefined): OpenApiV2Format | undefined {
  for (const clause of acceptClauses(accept?.trim() || '*/*')) {
    const match = V2_MEDIA_TYPES.find(
      ([type, subtype]) => (clause.type === '*' || clause.type === type) && (clause.subtype === '*' || clause.subtype === subtype),
    );
    if (match) return match[2];
  }
  return undefined;
}

/** GET /openapi/v2 as JSON. */
export function openApiV2Json(groups: GroupVersions[]): string {
  return JSON.stringify({ swagger: '2.0', info: { title: 'Kubernetes', version: GIT_VERSION }, paths: {}, definitions: v2Definitions(groups) });
}

/** gnostic's Any: a value as YAML text (field 2). */
function any(value: unknown): WireWriter {
  return new WireWriter().tag(2, WIRE_TYPE.LENGTH_DELIMITED).string(stringify(value));
}

function schemaMessage(schema: V2Schema): WireWriter {
  const out = new WireWriter();
  const str = (field: number, value: unknown) => {
    if (typeof value === 'string') out.tag(field, WIRE_TYPE.LENGTH_DELIMITED).string(value);
  };
  str(1, schema.$ref);
  str(2, schema.format);
  str(4, schema.description);
  if (schema.default !== undefined) out.tag(5, WIRE_TYPE.LENGTH_DELIMITED).message(any(schema.default));
  for (const name of Array.isArray(schema.required) ? schema.required : []) str(19, name);
  for (const value of Array.isArray(schema.enum) ? schema.enum : []) out.tag(20, WIRE_TYPE.LENGTH_DELIMITED).message(any(value));
  if (isJsonObject(schema.additionalProperties)) {
    const item = new WireWriter().tag(1, WIRE_TYPE.LENGTH_DELIMITED).message(schemaMessage(schema.additionalProperties));
    out.tag(21, WIRE_TYPE.LENGTH_DELIMITED).message(item);
  }
  if (typeof schema.type === 'string') out.tag(22, WIRE_TYPE.LENGTH_DELIMITED).message(new WireWriter().tag(1, WIRE_TYPE.LENGTH_DELIMITED).string(schema.type));
  if (isJsonObject(schema.items))
    out.tag(23, WIRE_TYPE.LENGTH_DELIMITED).message(new WireWriter().tag(1, WIRE_TYPE.LENGTH_DELIMITED).message(schemaMessage(schema.items)));
  if (isJsonObject(schema.properties)) {
    const properties = new WireWriter();
    for (const [name, child] of Object.entries(schema.properties))
      if (isJsonObject(child)) properties.tag(1, WIRE_TYPE.LENGTH_DELIMITED).message(named(name, schemaMessage(child)));
    out.tag(25, WIRE_TYPE.LENGTH_DELIMITED).message(properties);
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith('x-')) out.tag(31, WIRE_TYPE.LENGTH_DELIMITED).message(named(key, any(value)));
  }
  return out;
}

/** NamedSchema / NamedAny: name (1) and value (2). */
function named(name: string, value: WireWriter): WireWriter {
  return new WireWriter().tag(1, WIRE_TYPE.LENGTH_DELIMITED).string(name).tag(2, WIRE_TYPE.LENGTH_DELIMITED).message(value);
}

/** GET /openapi/v2 as protobuf: an openapi_v2.Document. */
export function openApiV2Protobuf(groups: GroupVersions[]): Buffer {
  const definitions = new WireWriter();
  for (const [name, schema] of Object.entries(v2Definitions(groups)))
    definitions.tag(1, WIRE_TYPE.LENGTH_DELIMITED).message(named(name, schemaMessage(schema)));
  const info = new WireWriter().tag(1, WIRE_TYPE.LENGTH_DELIMITED).string('Kubernetes').tag(2, WIRE_TYPE.LENGTH_DELIMITED).string(GIT_VERSION);
  const document = new WireWriter()
    .tag(1, WIRE_TYPE.LENGTH_DELIMITED)
    .string('2.0')
    .tag(2, WIRE_TYPE.LENGTH_DELIMITED)
    .message(info)
    .tag(8, WIRE_TYPE.LENGTH_DELIMITED)
    .message(new WireWriter())
    .tag(9, WIRE_TYPE.LENGTH_DELIMITED)
    .message(definitions);
  return Buffer.from(document.finish());
}
