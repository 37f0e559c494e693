// A CustomResourceDefinition as the ResourceDefinitions the API server serves: the storage version stored, every
// other served version converted to and from it (the `None` strategy: only apiVersion changes; `Webhook`: the
// CRD's conversion webhook converts, objects stored in an older version too). Validation, defaulting and pruning
// come from the version's structural schema; columns from additionalPrinterColumns.
import {
  apiVersionOf,
  defineKind,
  errors,
  humanAge,
  readJsonPath,
  STATUS_ONLY_METADATA,
  type ColumnSpec,
  type CustomResourceColumnDefinition,
  type KubeObject,
  type ResourceDefinition,
  type StatusCause,
  type VersionConversion,
} from '@skiff/api';
import { decodeObject, messageSchema, t, type ObjectSchema } from '@skiff/api/schema';
import { storageVersion, type CustomResourceDefinition, type CustomResourceVersion } from './crd.js';
import type { WebhookConverter } from './conversion/webhook.js';
import { customKindSchema } from './kind-schema.js';
import { compileSchema, type CompiledSchema } from './schema/index.js';

const PRINTER_TYPES: readonly ColumnSpec['type'][] = ['integer', 'number', 'string', 'boolean', 'date'];

/** The metadata part of a custom resource, type-checked as any object's metadata is. */
const ENVELOPE: ObjectSchema = t.object(
  'CustomResourceEnvelope',
  { apiVersion: t.string(), kind: t.string(), metadata: messageSchema('k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta') },
  { package: 'skiff.apiextensions' },
);

/**
 * Definitions for every served version of a CRD, the storage version first; none when no version is stored.
 * `webhook` converts between versions for the `Webhook` strategy. Objects read are converted to the version asked
 * for, then pruned and defaulted by its schema, as kube-apiserver's storage decoding does: an object stored before
 * the storage version changed, or before the schema gained a default, reads as the schema says today.
 */
export function customResourceDefinitions(crd: CustomResourceDefinition, webhook?: WebhookConverter): ResourceDefinition[] {
  const stored = storageVersion(crd);
  if (!stored) return [];
  const { group } = crd.spec;
  const storedAs = apiVersionOf({ group, version: stored.name });
  const convert = (object: KubeObject, apiVersion: string): KubeObject | Promise<KubeObject> =>
    object.apiVersion === apiVersion ? object : webhook ? webhookConvert(webhook, object, apiVersion) : { ...{}, ...object, apiVersion };
  const definition = (version: CustomResourceVersion, isStored: boolean) => {
    const apiVersion = apiVersionOf({ group, version: version.name });
    const compiled = version.schema?.openAPIV3Schema ? compileSchema(version.schema.openAPIV3Schema) : undefined;
    const read = async (object: KubeObject) => asRead(await convert(object, apiVersion), compiled);
    if (isStored) return versionDefinition(crd, version, compiled, undefined, read);
    return versionDefinition(crd, version, compiled, { toStorage: (object) => convert(object, storedAs), fromStorage: read });
  };
  return [definition(stored, true), ...crd.spec.versions.filter((v) => v.served && v !== stored).map((v) => definition(v, false))];
}

/** An object read from the store, pruned and defaulted by its version's schema (a copy: stored objects are shared). */
function asRead(object: KubeObject, compiled: CompiledSchema | undefined): KubeObject {
  if (!compiled) return object;
  const copy = structuredClone(object);
  compiled.prune(copy as Record<string, unknown>);
  compiled.applyDefaults(copy as Record<string, unknown>);
  return copy;
}

function versionDefinition(
  crd: CustomResourceDefinition,
  version: CustomResourceVersion,
  compiled: CompiledSchema | undefined,
  conversion?: VersionConversion,
  readConversion?: ResourceDefinition['readConversion'],
): ResourceDefinition {
  const { group, names, scope } = crd.spec;
  const props = version.schema?.openAPIV3Schema;
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
    // A status write of a custom resource changes its status only, as upstream's status strategy for them.
    keptOnStatusUpdate: STATUS_ONLY_METADATA,
    columns: printerColumns(version.additionalPrinterColumns),
    schema: customKindSchema({ group, version: version.name, kind: names.kind }, props),
    ...(version.subresources?.scale ? { scale: version.subresources.scale } : {}),
    strategy: {
      defaults: compiled ? (object) => compiled.applyDefaults(object) : undefined,
      validate: compiled ? (object, old) => compiled.validate(object, old) : undefined,
    },
    ...(conversion ? { conversion } : {}),
  });
  return {
    ...{},
    ...definition,
    ...(readConversion ? { readConversion } : {}),
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

/** A failed conversion answers the request with a 500, as kube-apiserver's does. */
async function webhookConvert(webhook: WebhookConverter, object: KubeObject, apiVersion: string): Promise<KubeObject> {
  try {
    return await webhook.convert(object, apiVersion);
  } catch (err) {
    throw errors.internal((err as Error).message);
  }
}
