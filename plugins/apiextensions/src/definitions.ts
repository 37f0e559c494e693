// A CustomResourceDefinition as the ResourceDefinitions the API server serves: the storage version stored, every
// other served version converted to and from it (the `None` strategy: only apiVersion changes). Validation,
// defaulting and pruning come from the version's structural schema; columns from additionalPrinterColumns.
import {
  apiVersionOf,
  defineKind,
  humanAge,
  readJsonPath,
  type ColumnSpec,
  type CustomResourceColumnDefinition,
  type KubeObject,
  type ResourceDefinition,
  type StatusCause,
} from '@skiff/api';
import { decodeObject, messageSchema, t, type ObjectSchema } from '@skiff/api/schema';
import { storageVersion, type CustomResourceDefinition, type CustomResourceVersion } from './crd.js';
import { customKindSchema } from './kind-schema.js';
import { compileSchema, type CompiledSchema } from './schema/index.js';

const PRINTER_TYPES: readonly ColumnSpec['type'][] = ['integer', 'number', 'string', 'boolean', 'date'];

/** The metadata part of a custom resource, type-checked as any object's metadata is. */
const ENVELOPE: ObjectSchema = t.object(
  'CustomResourceEnvelope',
  { apiVersion: t.string(), kind: t.string(), metadata: messageSchema('k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta') },
  { package: 'skiff.apiextensions' },
);

/** Definitions for every served version of a CRD, the storage version first; none when no version is stored. */
export function customResourceDefinitions(crd: CustomResourceDefinition): ResourceDefinition[] {
  const stored = storageVersion(crd);
  if (!stored) return [];
  const storage = versionDefinition(crd, stored);
  const others = crd.spec.versions.filter((v) => v.served && v !== stored).map((v) => versionDefinition(crd, v, stored.name));
  return [storage, ...others];
}

function versionDefinition(crd: CustomResourceDefinition, version: CustomResourceVersion, storedAs?: string): ResourceDefinition {
  const { group, names, scope } = crd.spec;
  const props = version.schema?.openAPIV3Schema;
  const compiled = props ? compileSchema(props) : undefined;
  const subresources = [...(version.subresources?.status ? ['status'] : []), ...(version.subresources?.scale ? ['scale'] : [])];
  const definition = defineKind({
    group,
    version: version.name,
    kind: names.kind,
    resource: names.plural,
    singular: names.singular || names.kind.toLowerCase(),
    namespaced: scope === 'Namespaced',
    ...(names.shortNames?.length ? { shortNames: names.shortNames } : {}),
    ...(names.categories?.length ? { categories: names.categories } : {}),
    ...(subresources.length ? { subresources } : {}),
    columns: printerColumns(version.additionalPrinterColumns),
    schema: customKindSchema({ group, version: version.name, kind: names.kind }, props),
    ...(version.subresources?.scale ? { scale: version.subresources.scale } : {}),
    strategy: {
      defaults: compiled ? (object) => compiled.applyDefaults(object) : undefined,
      validate: compiled ? (object, old) => compiled.validate(object, old) : undefined,
    },
    ...(storedAs ? { conversion: noneConversion(group, version.name, storedAs) } : {}),
  });
  return {
    ...definition,
    listKind: names.listKind || `${names.kind}List`,
    strategicMergePatch: false,
    decode: (object, strict) => decodeCustom(object, compiled, strict),
  };
}

/**
 * The decode step of a custom resource: metadata is type-checked as any kind's, everything else the schema does
 * not declare is pruned — reported as unknown fields, so fieldValidation Strict refuses them and Warn names them.
 */
function decodeCustom(object: unknown, compiled: CompiledSchema | undefined, strict: boolean): { errors: StatusCause[]; unknownFields: string[] } {
  const record = object as Record<string, unknown>;
  const envelope: Record<string, unknown> = { apiVersion: record.apiVersion, kind: record.kind, metadata: record.metadata };
  const checked = decodeObject(ENVELOPE, envelope, { normalize: true });
  if (record.metadata !== undefined) record.metadata = envelope.metadata;
  const pruned = compiled ? compiled.prune(record) : [];
  return { errors: checked.errors, unknownFields: strict ? [...checked.unknownFields, ...pruned] : [] };
}

/** kubectl's columns: Name, then the CRD's printer columns, or Age when it declares none. */
function printerColumns(columns: CustomResourceColumnDefinition[] | undefined): ColumnSpec[] {
  if (!columns?.length) return [{ name: 'Age', cell: (object: KubeObject, now: number) => humanAge(object.metadata.creationTimestamp, now) }];
  return columns.map((column) => {
    const type = PRINTER_TYPES.find((known) => known === column.type) ?? 'string';
    const priority = (column.priority ?? 0) > 0 ? 1 : 0;
    if (type === 'date') {
      return {
        name: column.name,
        type,
        priority,
        cell: (object: KubeObject, now: number) => {
          const value = readJsonPath(object, column.jsonPath)[0];
          return typeof value === 'string' ? humanAge(value, now) : '<unknown>';
        },
      };
    }
    return { name: column.name, jsonPath: column.jsonPath, type, priority, ...(column.format ? { format: column.format } : {}) };
  });
}

/** The `None` conversion: the object is the same in every version; only its apiVersion says which. */
function noneConversion(group: string, served: string, stored: string) {
  const as = (version: string) => (object: KubeObject) => ({ ...object, apiVersion: apiVersionOf({ group, version }) });
  return { toStorage: as(stored), fromStorage: as(served) };
}
