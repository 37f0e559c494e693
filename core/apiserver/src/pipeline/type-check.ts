import { apiVersionOf, errors, isJsonObject, type KubeObject } from '@skiff/api';
import { decodeObject, kindSchema } from '@skiff/api/schema';
import type { ResourceDefinition } from '@skiff/kernel';
import type { BodyFacts } from './decode-body.js';
import { duplicateFieldErrors, strictWarnings } from './duplicate-fields.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** The `fieldValidation` query parameter; Kubernetes defaults to Warn, kubectl sends Strict. */
export function fieldValidationOf(query: Record<string, string | undefined>): FieldValidation {
  const value = query.fieldValidation;
  if (value === undefined || value === '') return 'Warn';
  if (value === 'Strict' || value === 'Warn' || value === 'Ignore') return value;
  throw errors.badRequest(`fieldValidation parameter unsupported: ${JSON.stringify(value)} (use Strict, Warn or Ignore)`);
}

/**
 * The kind a body sent to this resource must carry (a Scale, a Binding… are checked by their own handlers).
 * A body without apiVersion or kind gets them, first, as Kubernetes serialises objects.
 */
export function withTypeMeta(object: KubeObject, definition: ResourceDefinition): KubeObject {
  const apiVersion = apiVersionOf(definition);
  if (object.apiVersion !== undefined && object.apiVersion !== apiVersion)
    throw errors.badRequest(`the API version in the data (${object.apiVersion}) does not match the expected API version (${apiVersion})`);
  if (object.kind !== undefined && object.kind !== definition.kind)
    throw errors.badRequest(`the kind in the data (${object.kind}) does not match the expected kind (${definition.kind})`);
  if (object.apiVersion !== undefined && object.kind !== undefined) return object;
  return { apiVersion, kind: definition.kind, ...object };
}

/** A body that must be one object (create, update): not an array, not a scalar. */
export function requireObject(value: unknown, definition: ResourceDefinition): KubeObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw errors.badRequest(`the request body must be a ${definition.kind} object`);
  const object = value as KubeObject;
  if (object.metadata === undefined || object.metadata === null) object.metadata = {};
  else if (typeof object.metadata !== 'object' || Array.isArray(object.metadata))
    throw errors.badRequest(`${definition.kind} in version "${definition.version}" cannot be handled as a ${definition.kind}: metadata: must be an object`);
  return object;
}

/** The kinds of subresource bodies (a Scale, a Binding, an Eviction), which their handlers check further. */
export interface SubresourceKind {
  group: string;
  version: string;
  kind: string;
}

const subresourceDecoders = new Map<string, TypeCheckTarget>();

/** A kind's decoder from the generated API facts, like a resource definition's, for its type check. */
function subresourceDecoder({ group, version, kind }: SubresourceKind): TypeCheckTarget {
  const key = `${group}/${version}/${kind}`;
  let target = subresourceDecoders.get(key);
  if (!target) {
    const schema = kindSchema(group, version, kind);
    // Unknown fields are reported, not errors: typeCheck decides by the request's field validation.
    target = {
      kind,
      version,
      ...(schema ? { decode: (object, _strict, numberLiterals) => decodeObject(schema, object, numberLiterals ? { numberLiterals } : {}) } : {}),
    };
    subresourceDecoders.set(key, target);
  }
  return target;
}

/**
 * The body of a subresource with a kind of its own (a Scale, a Binding, an Eviction): an object, given
 * metadata if it has none, type-checked against that kind as a PUT body is (wrong types and out-of-range
 * integers are a 400); `T` is what its handler checks the rest against. `what` names the kind with its
 * article ("a Scale") for the 400. `ctx.warnings` becomes this check's warnings (unknown fields with
 * fieldValidation=Warn), as a patch's last attempt sets them.
 */
export function requireSubresourceBody<T extends KubeObject>(
  ctx: { request: { query: Record<string, string | undefined> }; warnings: string[] } & BodyFacts,
  value: unknown,
  kind: SubresourceKind,
  what: string,
): T {
  if (!isJsonObject(value)) throw errors.badRequest(`the request body must be ${what} object`);
  const object = value as T;
  object.metadata ??= {};
  ctx.warnings.splice(0, ctx.warnings.length, ...typeCheck(object, subresourceDecoder(kind), fieldValidationOf(ctx.request.query), ctx));
  return object;
}

/** What the type check needs of a kind: its decoder, and its kind and version for the 400's message. */
export type TypeCheckTarget = Pick<ResourceDefinition, 'kind' | 'version' | 'decode'>;

/**
 * The type check: the definition's decoder reports wrong types and integers Go would not take (`1e3`,
 * 2147483648 for an int32; always a 400 naming the field) and unknown fields (a 400 with Strict, warnings
 * with Warn, nothing with Ignore); `body` says how the body's text wrote it. Returns the warnings to send.
 */
export function typeCheck(object: KubeObject, definition: TypeCheckTarget, validation: FieldValidation, body?: BodyFacts): string[] {
  if (!definition.decode) return [];
  const result = definition.decode(object, validation !== 'Ignore', body?.numberLiterals?.());
  if (result.errors.length > 0) {
    const detail = result.errors.map((cause) => (cause.field ? `${cause.field}: ${cause.message}` : cause.message)).join(', ');
    throw errors.badRequest(`${definition.kind} in version "${definition.version}" cannot be handled as a ${definition.kind}: ${detail}`, result.errors);
  }
  if (validation === 'Ignore') return [];
  const repeated = body?.duplicateFields?.();
  const unknown = result.unknownFields.map((field) => `unknown field "${field}"`);
  const duplicates = duplicateFieldErrors(repeated);
  if (unknown.length === 0 && duplicates.length === 0) return [];
  // Go's YAML decoder reads the body before its JSON decoder looks for unknown fields.
  const strictErrors = repeated?.decoder === 'yaml' ? [...duplicates, ...unknown] : [...unknown, ...duplicates];
  if (validation === 'Warn') return strictWarnings(strictErrors);
  throw errors.badRequest(
    `${definition.kind} in version "${definition.version}" cannot be handled as a ${definition.kind}: strict decoding error: ${strictErrors.join(', ')}`,
    [
      ...result.unknownFields.map((field) => ({ type: 'FieldValueInvalid', field, message: 'unknown field' })),
      ...(repeated?.fields ?? []).map((field) => ({ type: 'FieldValueDuplicate', field: field.path, message: 'duplicate field' })),
    ],
  );
}
