// A schema compiled into a tree of nodes: every lookup the request path makes (property schemas, defaults,
// formats, patterns) is done once per CRD version instead of once per object.
import type { ValidationRule } from '@skiff/api';
import { effectiveFormat, stringFormatCheck } from './formats.js';
import { LazyPattern } from './regex.js';
import type { JSONSchemaProps } from './types.js';

/** A compiled CEL rule, filled in by the CEL compiler (cel/compile.ts). */
export interface RuleProgram {
  readonly rule: ValidationRule;
  readonly usesOldSelf: boolean;
  /** Set when the rule did not compile: the detail upstream reports (`compilation failed: …`). */
  readonly error?: string;
  /** Set when the messageExpression did not compile. */
  readonly messageError?: string;
  /** The rule's fieldPath as a field path (`spec.replicas`), '' when none. */
  readonly fieldPath: string;
  /** The most one evaluation of the rule can cost (estimated from the schema), when it compiled. */
  readonly cost?: number;
  /** The same for its messageExpression. */
  readonly messageCost?: number;
  evaluate?(bindings: Record<string, unknown>): unknown;
  message?(bindings: Record<string, unknown>): unknown;
}

export interface SchemaNode {
  readonly props: JSONSchemaProps;
  /** The declared type, '' when none. */
  readonly type: string;
  /** The types the value may have: ['integer', 'string'] for int-or-string. */
  readonly types: readonly string[];
  readonly nullable: boolean;
  /** The format kept for validation ('' when absent or unsupported for the type). */
  readonly format: string;
  readonly formatCheck?: (value: string) => boolean;
  /** Compiled on first use, so serving a stored CRD never waits for its patterns (an invalid one fails every value). */
  readonly pattern?: LazyPattern;
  readonly properties?: ReadonlyMap<string, SchemaNode>;
  /** additionalProperties: a schema, `true` (any value), `false`, or undefined (not set). */
  readonly additional?: SchemaNode | boolean;
  readonly items?: SchemaNode;
  readonly allOf: readonly SchemaNode[];
  readonly anyOf: readonly SchemaNode[];
  readonly oneOf: readonly SchemaNode[];
  readonly not?: SchemaNode;
  readonly hasDefault: boolean;
  /** Properties that carry a default, in declaration order. */
  readonly defaulted: readonly (readonly [string, SchemaNode])[];
  readonly preserveUnknown: boolean;
  readonly embedded: boolean;
  readonly intOrString: boolean;
  readonly listType?: string;
  readonly listMapKeys: readonly string[];
  readonly mapType?: string;
  /** CEL rules of this node (empty until the CEL compiler fills them). */
  rules: RuleProgram[];
  /** Whether this node or one below it has defaults / CEL rules / list types: whole subtrees are skipped otherwise. */
  readonly defaultsBelow: boolean;
  rulesBelow: boolean;
  readonly listTypesBelow: boolean;
}

function compileNodes(list: readonly JSONSchemaProps[] | undefined): SchemaNode[] {
  return (list ?? []).map((s) => compileNode(s));
}

/** Compiles one schema (and everything below it) into nodes. Assumes a schema checkSchema accepted. */
export function compileNode(props: JSONSchemaProps): SchemaNode {
  const type = props.type ?? '';
  const intOrString = props['x-kubernetes-int-or-string'] === true;
  const format = effectiveFormat(type, props.format);
  let properties: Map<string, SchemaNode> | undefined;
  if (props.properties) {
    properties = new Map();
    for (const [name, sub] of Object.entries(props.properties)) properties.set(name, compileNode(sub));
  }
  const additional =
    props.additionalProperties === undefined
      ? undefined
      : typeof props.additionalProperties === 'boolean'
        ? props.additionalProperties
        : compileNode(props.additionalProperties);
  const items = props.items && !Array.isArray(props.items) ? compileNode(props.items) : undefined;
  const children = [...(properties?.values() ?? []), ...(typeof additional === 'object' ? [additional] : []), ...(items ? [items] : [])];
  const defaulted = [...(properties ?? [])].filter(([, sub]) => sub.hasDefault);
  const hasDefault = props.default !== undefined;
  const listType = props['x-kubernetes-list-type'];
  return {
    props,
    type,
    types: intOrString ? ['integer', 'string'] : type ? [type] : [],
    nullable: props.nullable === true,
    format,
    formatCheck: format ? stringFormatCheck(format) : undefined,
    pattern: props.pattern ? new LazyPattern(props.pattern) : undefined,
    properties,
    additional,
    items,
    allOf: compileNodes(props.allOf),
    anyOf: compileNodes(props.anyOf),
    oneOf: compileNodes(props.oneOf),
    not: props.not ? compileNode(props.not) : undefined,
    hasDefault,
    defaulted,
    preserveUnknown: props['x-kubernetes-preserve-unknown-fields'] === true,
    embedded: props['x-kubernetes-embedded-resource'] === true,
    intOrString,
    listType,
    listMapKeys: props['x-kubernetes-list-map-keys'] ?? [],
    mapType: props['x-kubernetes-map-type'],
    rules: [],
    defaultsBelow: hasDefault || children.some((c) => c.defaultsBelow),
    rulesBelow: false,
    listTypesBelow: listType === 'set' || listType === 'map' || children.some((c) => c.listTypesBelow),
  };
}

/** The schema of a field of an object node: its property, else its additionalProperties schema. */
export function fieldNode(node: SchemaNode | undefined, name: string): SchemaNode | undefined {
  if (!node) return undefined;
  return node.properties?.get(name) ?? (typeof node.additional === 'object' ? node.additional : undefined);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A deep copy of a JSON value. */
export function copyJSON<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}

/** Deep equality of decoded JSON values. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (Array.isArray(b)) return false;
  const ra = Object.entries(a);
  const rb = new Map<string, unknown>(Object.entries(b));
  return ra.length === rb.size && ra.every(([k, v]) => rb.has(k) && jsonEqual(v, rb.get(k)));
}
