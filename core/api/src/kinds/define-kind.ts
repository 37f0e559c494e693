// One declaration per kind. Everything the API server serves about a kind — its schema and decoding,
// discovery names, table columns, generic validation, status and scale handling — comes from this and
// from the generated API facts; kinds with real upstream behaviour add a strategy.
import { humanAge } from '../duration.js';
import { errorMessage, isJsonObject } from '../guards.js';
import { labelSelectorFromObject } from '../labels.js';
import { decodeObject } from '../schemas/decode.js';
import { kindSchema } from '../schemas/from-facts.js';
import type { ObjectSchema } from '../schemas/language.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../validation/meta.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../validation/names.js';
import type { ResourceDefinition, ScaleDefinition, TableColumn, VersionConversion } from './definition.js';
import { parseJsonPath, readJsonPath } from './json-path.js';
import { validateAgainstSchema } from './schema-validation.js';
import { BUILTIN_NAMES } from '../generated/resources.js';

/** A built-in resource's short names and categories, as upstream lists them (generated/api-resources-1.36.txt). */
function builtinNames(group: string, resource: string): { shortNames?: readonly string[]; categories?: readonly string[] } {
  return BUILTIN_NAMES[group ? `${resource}.${group}` : resource] ?? {};
}

/** How a kind's object names are checked. */
export type NameRule = 'dns-subdomain' | 'dns-label' | 'path-segment';

/** A table column: a JSON path into the object, or a function of it. */
export interface ColumnSpec<T extends KubeObject = KubeObject> {
  name: string;
  /** `.spec.replicas`; several values (through `[*]`) are joined with commas. */
  jsonPath?: string;
  cell?(object: T, now: number): unknown;
  type?: TableColumn['type'];
  format?: string;
  /** 1: only with `-o wide`. */
  priority?: 0 | 1;
}

/** The Age column (`kubectl get`'s AGE): place it among a kind's columns where kubectl prints it. */
export const AGE_COLUMN: ColumnSpec = Object.freeze({
  name: 'Age',
  cell: (object: KubeObject, now: number) => humanAge(object.metadata.creationTimestamp, now),
});

/**
 * Behaviour beyond Kubernetes' defaults, written once per kind and typed by it: the API server hands each
 * method an object it decoded as the kind (old objects are stored ones), so no method needs a cast.
 */
export interface KindStrategy<T extends KubeObject = KubeObject> {
  defaults?(object: T): void;
  /** Kind-specific validation on create (old undefined) and update; metadata, enum and required-field checks run as well. */
  validate?(object: T, old?: T, subresource?: string): StatusCause[];
  /** Replaces the whole generic validation (metadata included), for kinds whose upstream validation differs there. */
  validateAll?(object: T, old?: T, subresource?: string): StatusCause[];
  prepareForCreate?(object: T): void;
  prepareForUpdate?(object: T, old: T, subresource: string): void;
  /** Field selectors beyond metadata.name and metadata.namespace: each reads the field's string form. */
  fieldSelectors?: Record<string, (object: T) => string | undefined>;
  /** The grace period a DELETE gets, from the one requested (see ResourceDefinition). */
  deletionGracePeriod?(object: T, requested: number | undefined): number;
  deletionFinalizers?(object: T): string[];
  onDeletionMarked?(object: T): void;
}

export interface KindSpec<T extends KubeObject = KubeObject> {
  group: string;
  version: string;
  kind: string;
  /** The plural resource name: `deployments`. Spread a built-in kind's coordinates from RESOURCES. */
  resource: string;
  namespaced: boolean;
  singular?: string;
  shortNames?: string[];
  categories?: string[];
  /** status, scale, and any others the API server serves for the kind. */
  subresources?: string[];
  /** Defaults to all eight (create, delete, deletecollection, get, list, patch, update, watch). */
  verbs?: string[];
  /** Columns after Name (first unless the list places a column named Name itself); without any: Name and Age. */
  columns?: ColumnSpec<T>[];
  /** A whole table instead of columns, for rows computed together (pods). */
  table?: ResourceDefinition['table'];
  /** Defaults to the kind's schema in the generated API facts; give one for a kind upstream does not define. */
  schema?: ObjectSchema;
  names?: NameRule;
  scale?: ScaleDefinition;
  strategy?: KindStrategy<T>;
  /**
   * Metadata fields a status write may not change (labels for Deployments; STATUS_ONLY_METADATA for kinds whose
   * status writes change nothing but status). The others come from the request, as upstream's status strategies do.
   */
  keptOnStatusUpdate?: readonly (keyof ObjectMeta)[];
  /** This version is served from another version's storage, converted (see VersionConversion). */
  conversion?: VersionConversion;
}

export const ALL_VERBS = Object.freeze(['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);

const NAME_RULES: Record<NameRule, (name: string, prefix: boolean) => string[]> = {
  'dns-subdomain': (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name),
  'dns-label': (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name),
  'path-segment': (name) => pathSegmentErrors(name),
};

/** generateName may end in a dash: check it as if a generated suffix followed. */
function maskTrailingDash(name: string): string {
  return name.endsWith('-') && name.length > 1 ? `${name.slice(0, -1)}a` : name;
}

/** ValidatePathSegmentName: RBAC objects and a few others may use any name that is a valid URL path segment. */
export function pathSegmentErrors(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  for (const bad of ['/', '%']) if (name.includes(bad)) return [`may not contain '${bad}'`];
  return [];
}

/** Puts back `source[field]` (a copy, since the stored object may be shared), or removes the field. */
export function restoreField<T extends object>(target: T, source: T, field: keyof T): void {
  if (source[field] === undefined) delete target[field];
  else target[field] = structuredClone(source[field]);
}

/**
 * The metadata a status write keeps from the stored object where only status may change (custom resources,
 * VolumeAttachments, the flowcontrol kinds): the fields upstream's ResetObjectMetaForStatus puts back.
 */
export const STATUS_ONLY_METADATA: readonly (keyof ObjectMeta)[] = Object.freeze([
  'deletionTimestamp',
  'generation',
  'labels',
  'annotations',
  'finalizers',
  'ownerReferences',
]);

/**
 * prepareForUpdate for kinds with a status subresource: a main-resource update keeps the stored status;
 * a `status` update keeps everything but status and metadata, and the metadata fields listed.
 */
export function splitSpecAndStatus(keptOnStatusUpdate: readonly (keyof ObjectMeta)[] = []) {
  return (object: KubeObject, old: KubeObject, subresource: string): void => {
    if (subresource === '') {
      restoreField(object, old, 'status');
      return;
    }
    // Other subresources (scale, approval) change what their handlers build from the stored object.
    if (subresource !== 'status') return;
    for (const key of Object.keys(object)) if (key !== 'status' && key !== 'metadata' && key !== 'apiVersion' && key !== 'kind') delete object[key];
    for (const key of Object.keys(old)) if (key !== 'status' && key !== 'metadata' && key !== 'apiVersion' && key !== 'kind') restoreField(object, old, key);
    for (const field of keptOnStatusUpdate) restoreField(object.metadata, old.metadata, field);
  };
}

/** What Go's printers show for an unset field: its zero value (0, false, ""). */
const ZERO: Record<TableColumn['type'], unknown> = { integer: 0, number: 0, boolean: false, string: '', date: '' };

function formatCell(values: unknown[], type: TableColumn['type']): unknown {
  if (values.length === 0) return ZERO[type];
  if (values.length === 1) {
    const [value] = values;
    if (value !== null && typeof value === 'object') return JSON.stringify(value);
    return value;
  }
  return values.map((value) => (value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value))).join(',');
}

const NAME_SPEC: ColumnSpec = { name: 'Name', format: 'name', cell: (object: KubeObject) => object.metadata.name };

function tableOf(kind: string, columns: ColumnSpec<KubeObject>[] | undefined): ResourceDefinition['table'] {
  const given = columns ?? [AGE_COLUMN];
  // A column that cannot print fails the declaration, not the first `kubectl get`.
  for (const spec of given) {
    if (!spec.cell && !spec.jsonPath) throw new Error(`defineKind ${kind}: column "${spec.name}" needs a jsonPath or a cell function`);
    if (spec.jsonPath) {
      try {
        parseJsonPath(spec.jsonPath);
      } catch (err) {
        throw new Error(`defineKind ${kind}: column "${spec.name}": ${errorMessage(err)}`);
      }
    }
  }
  const specs = given.some((spec) => spec.name === 'Name') ? given : [NAME_SPEC, ...given];
  const cells = specs.map((spec) => {
    const type = spec.type ?? 'string';
    if (spec.cell) return spec.cell;
    const path = spec.jsonPath!;
    return (object: KubeObject) => formatCell(readJsonPath(object, path), type);
  });
  return {
    columns: specs.map((spec) => ({
      name: spec.name,
      type: spec.type ?? 'string',
      ...(spec.format ? { format: spec.format } : {}),
      priority: spec.priority ?? 0,
    })),
    cells: (object, now) => cells.map((cell) => cell(object, now)),
  };
}

/** Causes not already reported for the same field: the schema's checks only add what the kind's own did not say. */
function merged(own: StatusCause[], generic: StatusCause[]): StatusCause[] {
  const fields = new Set(own.map((cause) => cause.field));
  return [...own, ...generic.filter((cause) => !fields.has(cause.field))];
}

/** A selector's string form, for Scale's status.selector; objects are LabelSelectors. */
export function selectorString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!isJsonObject(value)) return '';
  try {
    return labelSelectorFromObject(value).toString();
  } catch {
    return '';
  }
}

/**
 * Builds a kind's ResourceDefinition from its declaration and the generated API facts. `T` is the kind's
 * type: the strategy and columns are written against it, and the definition serves any object the API
 * server decoded as this kind (the one place that promise is taken on trust).
 */
export function defineKind<T extends KubeObject = KubeObject>(typed: KindSpec<T>): ResourceDefinition {
  const spec = typed as unknown as KindSpec<KubeObject>;
  const schema = spec.schema ?? kindSchema(spec.group, spec.version, spec.kind);
  if (!schema) throw new Error(`defineKind: upstream defines no ${spec.group || 'core'}/${spec.version} ${spec.kind}; give its schema`);
  const builtin = builtinNames(spec.group, spec.resource);
  const shortNames = spec.shortNames ?? builtin.shortNames;
  const categories = spec.categories ?? builtin.categories;
  const subresources = spec.subresources ?? [];
  const hasStatus = subresources.includes('status');
  const strategy = spec.strategy ?? {};

  const nameRule = NAME_RULES[spec.names ?? 'dns-subdomain'];
  const metaRules = { namespaced: spec.namespaced, name: nameRule };

  const validate = (object: KubeObject, old?: KubeObject, subresource = ''): StatusCause[] => {
    const own = strategy.validateAll
      ? strategy.validateAll(object, old, subresource)
      : [
          ...validateObjectMeta(object.metadata, metaRules),
          ...(old ? validateObjectMetaUpdate(object.metadata, old.metadata) : []),
          ...(strategy.validate?.(object, old, subresource) ?? []),
        ];
    return merged(own, validateAgainstSchema(schema, object));
  };

  const statusPrepareForUpdate = hasStatus ? splitSpecAndStatus(spec.keptOnStatusUpdate) : undefined;
  return {
    group: spec.group,
    version: spec.version,
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    resource: spec.resource,
    singular: spec.singular ?? spec.kind.toLowerCase(),
    namespaced: spec.namespaced,
    ...(shortNames?.length ? { shortNames: [...shortNames] } : {}),
    ...(categories?.length ? { categories: [...categories] } : {}),
    ...(subresources.length ? { subresources } : {}),
    verbs: [...(spec.verbs ?? ALL_VERBS)],
    schema,
    decode: (object, _strict, numberLiterals) => decodeObject(schema, object, { normalize: true, ...(numberLiterals ? { numberLiterals } : {}) }),
    ...(strategy.defaults ? { defaults: strategy.defaults } : {}),
    validate,
    hasStatus,
    table: spec.table ?? tableOf(spec.kind, spec.columns),
    ...(strategy.fieldSelectors ? { fieldSelectors: strategy.fieldSelectors } : {}),
    prepareForCreate:
      strategy.prepareForCreate ??
      (hasStatus
        ? (object) => {
            object.status = {};
          }
        : undefined),
    prepareForUpdate:
      strategy.prepareForUpdate || statusPrepareForUpdate
        ? (object, old, subresource) => {
            statusPrepareForUpdate?.(object, old, subresource);
            strategy.prepareForUpdate?.(object, old, subresource);
          }
        : undefined,
    ...(spec.scale ? { scale: spec.scale } : {}),
    ...(strategy.deletionGracePeriod ? { deletionGracePeriod: strategy.deletionGracePeriod } : {}),
    ...(strategy.deletionFinalizers ? { deletionFinalizers: strategy.deletionFinalizers } : {}),
    ...(strategy.onDeletionMarked ? { onDeletionMarked: strategy.onDeletionMarked } : {}),
    ...(spec.conversion ? { conversion: spec.conversion } : {}),
  };
}
