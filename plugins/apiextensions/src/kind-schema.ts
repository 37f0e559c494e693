// A custom resource's schema in Skiff's schema language, for what the API server derives from any kind's schema:
// OpenAPI documents (`kubectl explain`) and server-side apply's field sets. Each node below the root carries the
// CRD's own JSON schema as its OpenAPI form, so the published document is the one the CRD author wrote.
import { messageSchema, t, type ApiFieldFacts, type ObjectSchema, type Schema } from '@skiff/api/schema';
import type { JSONSchemaProps } from './schema/index.js';

const OBJECT_META = 'k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/**
 * What every custom kind publishes for the fields the API server adds to its schema, as `kubectl explain` shows
 * them (the conformance tests look for "APIVersion defines" and "Standard object's metadata").
 */
const TYPE_META_DESCRIPTIONS = {
  apiVersion: 'APIVersion defines the group and version of the schema the object is written in; the server converts it to the versions it serves.',
  kind: 'Kind names the type of the object, in CamelCase; it follows from the endpoint the object is sent to.',
  metadata: "Standard object's metadata: its name, namespace, labels, annotations, and what the server records about it.",
} as const;

/** The root fields of every kind: apiVersion, kind and metadata, described. */
function typeMetaFields(): Record<string, Schema> {
  return {
    apiVersion: t.string(TYPE_META_DESCRIPTIONS.apiVersion),
    kind: t.string(TYPE_META_DESCRIPTIONS.kind),
    metadata: { ...{}, ...messageSchema(OBJECT_META), description: TYPE_META_DESCRIPTIONS.metadata },
  };
}
const LIST_TYPES = ['atomic', 'set', 'map'] as const;
const MAP_TYPES = ['atomic', 'granular'] as const;

export interface KindNames {
  group: string;
  version: string;
  kind: string;
}

/** The OpenAPI package Kubernetes files a custom kind under: the group's labels reversed, then the version (`com.example.v1`). */
export function openApiPackage(group: string, version: string): string {
  return [...group.split('.').reverse(), version].join('.');
}

/** The root schema of one served version of a custom kind. */
export function customKindSchema(names: KindNames, props: JSONSchemaProps | undefined): ObjectSchema {
  const pkg = openApiPackage(names.group, names.version);
  const fields: Record<string, Schema> = {};
  const facts: Record<string, ApiFieldFacts> = {};
  for (const [name, child] of Object.entries(props?.properties ?? {})) {
    if (name === 'metadata' || name === 'apiVersion' || name === 'kind') continue;
    fields[name] = convert(child, pkg, `${names.kind}.${name}`);
    const fact = listFacts(name, child);
    if (fact) facts[name] = fact;
  }
  return {
    ...{},
    ...t.object(
      names.kind,
      { ...{}, ...typeMetaFields(), ...fields },
      {
        package: pkg,
        gvk: { group: names.group, version: names.version, kind: names.kind },
        ...(props?.description ? { description: props.description } : {}),
      },
    ),
    ...(Object.keys(facts).length ? { fieldFacts: facts } : {}),
  };
}

/** Facts for server-side apply: how a list field's items are told apart. */
function listFacts(name: string, props: JSONSchemaProps): ApiFieldFacts | undefined {
  if (!props['x-kubernetes-list-type'] && !props['x-kubernetes-map-type']) return undefined;
  // CRD validation admits only these values.
  const listType = LIST_TYPES.find((type) => type === props['x-kubernetes-list-type']);
  const mapType = MAP_TYPES.find((type) => type === props['x-kubernetes-map-type']);
  return {
    name,
    number: 0,
    type: props.type ?? '',
    ...(listType ? { listType } : {}),
    ...(props['x-kubernetes-list-map-keys'] ? { listMapKeys: props['x-kubernetes-list-map-keys'] } : {}),
    ...(mapType ? { mapType } : {}),
  };
}

function convert(props: JSONSchemaProps, pkg: string, name: string): Schema {
  const openapi = props as Record<string, unknown>;
  if (props['x-kubernetes-int-or-string']) return t.intOrString({ openapi });
  switch (props.type) {
    case 'string':
      return t.string({ openapi });
    case 'integer':
      return t.int64({ openapi });
    case 'number':
      return t.number({ openapi });
    case 'boolean':
      return t.boolean({ openapi });
    case 'array':
      return t.array(props.items && typeof props.items === 'object' ? convert(props.items as JSONSchemaProps, pkg, `${name}.items`) : t.any(), { openapi });
    case 'object':
      return convertObject(props, pkg, name, openapi);
    default:
      return t.any({ openapi });
  }
}

function convertObject(props: JSONSchemaProps, pkg: string, name: string, openapi: Record<string, unknown>): Schema {
  const additional = props.additionalProperties;
  if (!props.properties && additional && typeof additional === 'object') return t.map(convert(additional, pkg, `${name}.value`), { openapi });
  if (!props.properties && !props['x-kubernetes-embedded-resource']) return t.any({ openapi });
  const fields: Record<string, Schema> = {};
  const facts: Record<string, ApiFieldFacts> = {};
  if (props['x-kubernetes-embedded-resource']) Object.assign(fields, { apiVersion: t.string(), kind: t.string(), metadata: messageSchema(OBJECT_META) });
  for (const [field, child] of Object.entries(props.properties ?? {})) {
    fields[field] = convert(child, pkg, `${name}.${field}`);
    const fact = listFacts(field, child);
    if (fact) facts[field] = fact;
  }
  const atomic = props['x-kubernetes-map-type'] === 'atomic';
  return {
    ...{},
    ...t.object(name, fields, { package: pkg, openapi }),
    ...(Object.keys(facts).length ? { fieldFacts: facts } : {}),
    ...(atomic ? { structType: 'atomic' as const } : {}),
  };
}
