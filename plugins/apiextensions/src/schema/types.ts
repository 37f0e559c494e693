// The shape of apiextensions.k8s.io/v1 JSONSchemaProps as a CRD carries it, and the compiled form the
// custom-resource handler uses per served version.
import type { StatusCause, ValidationRule } from '@skiff/api';

/**
 * apiextensions.k8s.io/v1 JSONSchemaProps: the keywords a CRD schema may use (and some it may not, so they can be
 * refused). Kept here because the generated type renders items, additionalProperties, additionalItems and
 * dependencies with Go's wrapper structs, where JSON has a schema, a list, a boolean or a list of names.
 */
export interface JSONSchemaProps {
  id?: string;
  $schema?: string;
  $ref?: string;
  type?: string;
  format?: string;
  title?: string;
  description?: string;
  default?: unknown;
  example?: unknown;
  externalDocs?: { description?: string; url?: string };
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: boolean | JSONSchemaProps;
  patternProperties?: Record<string, JSONSchemaProps>;
  additionalItems?: boolean | JSONSchemaProps;
  definitions?: Record<string, JSONSchemaProps>;
  dependencies?: Record<string, JSONSchemaProps | string[]>;
  items?: JSONSchemaProps | JSONSchemaProps[];
  required?: string[];
  enum?: unknown[];
  nullable?: boolean;
  maximum?: number;
  minimum?: number;
  exclusiveMaximum?: boolean;
  exclusiveMinimum?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  multipleOf?: number;
  maxProperties?: number;
  minProperties?: number;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: ValidationRule[];
}

/** Everything one CRD version's schema needs at request time, precomputed once. */
export interface CompiledSchema {
  /**
   * Removes, in place, the fields the schema does not know and the nulls of non-nullable fields without a
   * default; returns the removed fields' paths, sorted (`spec.foo`, `spec.items[0].bar`) — the API server
   * words them as warnings `unknown field "spec.foo"`. apiVersion, kind and metadata at the root and in
   * embedded resources are kept; x-kubernetes-preserve-unknown-fields subtrees are kept.
   */
  prune(object: Record<string, unknown>): string[];
  /** Applies the schema's `default`s in place, in upstream's order; never touches the root's metadata. */
  applyDefaults(object: Record<string, unknown>): void;
  /**
   * Validates a pruned, defaulted object: the OpenAPI keywords, list types and the CEL rules. `old` is the
   * stored object on update: transition rules (those using oldSelf) run only when it is given.
   */
  validate(object: Record<string, unknown>, old?: Record<string, unknown>): StatusCause[];
}

/** Options of {@link compileSchema}. */
export interface CompileOptions {
  /**
   * CEL work allowed for one `validate` call, counted in comprehension iterations (each step of
   * all/exists/exists_one/map/filter) over all rules; when it runs out, validation stops with upstream's
   * "running out of cost budget" error. Default {@link DEFAULT_CEL_BUDGET}.
   */
  celBudget?: number;
}

/** One million comprehension steps: about half a second of CEL evaluation on one core, at most. */
export const DEFAULT_CEL_BUDGET = 1_000_000;
