import { createHash } from 'node:crypto';
import { toOpenApiComponents, type ObjectSchema, type OpenApiSchema } from '@skiff/api/schema';
import type { ResourceDefinition } from '@skiff/kernel';
import type { GroupVersions } from './groups.js';
import { verbsOf } from './subresources.js';
import { GIT_VERSION } from './version.js';

/**
 * The protobuf media type of GET /openapi/v2 (kubectl 1.27/1.28 insist on it before `apply -f`); Go's mime
 * parser needs this spelling of the type.
 */
export const OPENAPI_V2_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

const PATCH_COMPONENT = 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch';
const PATCH_CONTENT_TYPES = [
  'application/apply-patch+yaml',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
];

interface Document {
  /** Identifies the document's content: the kinds it covers and the build serving them. */
  hash: string;
  definitions: ResourceDefinition[];
  group: string;
  version: string;
  text?: string;
}

/**
 * The OpenAPI v3 documents, one per group-version, built from the kinds' schemas (the generated API facts):
 * `components.schemas` hold every struct reachable from the kinds, referencing each other, which is what
 * `kubectl explain` walks and what kubectl computes strategic merge patches from; each kind's `patch`
 * operation carries its group-version-kind and the `fieldValidation` parameter kubectl looks for.
 * Documents are built on first request and kept as text.
 */
export class OpenApiV3 {
  private readonly documents = new Map<string, Document>();

  constructor(groups: GroupVersions[]) {
    for (const entry of groups) {
      for (const version of entry.versions) {
        const definitions = entry.resources.get(version) ?? [];
        const path = entry.group ? `apis/${entry.group}/${version}` : `api/${version}`;
        const identity = JSON.stringify([GIT_VERSION, ...definitions.map((d) => [d.group, d.version, d.kind, d.resource, d.namespaced, d.verbs])]);
        this.documents.set(path, { hash: createHash('sha512').update(identity).digest('hex').toUpperCase(), definitions, group: entry.group, version });
      }
    }
  }

  /** GET /openapi/v3 */
  root() {
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const [path, { hash }] of this.documents) paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
    return { paths };
  }

  /** GET /openapi/v3/api/v1, /openapi/v3/apis/<group>/<version>: the document's JSON text. */
  document(path: string): string | undefined {
    const document = this.documents.get(path);
    if (!document) return undefined;
    document.text ??= JSON.stringify(groupVersionDocument(document));
    return document.text;
  }
}

function schemasOf(definitions: ResourceDefinition[]): ObjectSchema[] {
  return definitions.flatMap((definition) => (definition.schema ? [definition.schema] : []));
}

function groupVersionDocument({ group, version, definitions }: Document) {
  const paths: Record<string, unknown> = {};
  for (const definition of definitions) {
    if (!verbsOf(definition).includes('patch')) continue;
    const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const path = definition.namespaced ? `${base}/namespaces/{namespace}/${definition.resource}/{name}` : `${base}/${definition.resource}/{name}`;
    paths[path] = {
      parameters: [pathParameter('name'), ...(definition.namespaced ? [pathParameter('namespace')] : [])],
      patch: {
        operationId: `patch${definition.kind}`,
        parameters: [
          queryParameter('dryRun'),
          queryParameter('fieldManager'),
          queryParameter('fieldValidation'),
          { name: 'force', in: 'query', schema: { type: 'boolean', uniqueItems: true } },
        ],
        requestBody: {
          content: Object.fromEntries(PATCH_CONTENT_TYPES.map((type) => [type, { schema: { $ref: `#/components/schemas/${PATCH_COMPONENT}` } }])),
          required: true,
        },
        responses: { '200': { description: 'OK', content: { 'application/json': { schema: schemaRef(definition) } } } },
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group, version, kind: definition.kind },
      },
    };
  }
  const schemas: Record<string, OpenApiSchema> = { ...{}, ...toOpenApiComponents(schemasOf(definitions)), [PATCH_COMPONENT]: { type: 'object' } };
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: GIT_VERSION }, paths, components: { schemas } };
}

function schemaRef(definition: ResourceDefinition) {
  return definition.schema ? { $ref: `#/components/schemas/${definition.schema.package}.${definition.schema.name}` } : { type: 'object' };
}

function pathParameter(name: string) {
  return { name, in: 'path', required: true, schema: { type: 'string', uniqueItems: true } };
}

function queryParameter(name: string) {
  return { name, in: 'query', schema: { type: 'string', uniqueItems: true } };
}
