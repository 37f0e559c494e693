import { createHash } from 'node:crypto';
import type { ResourceDefinition } from '@skiff/kernel';
import type { GroupVersions } from './groups.js';
import { verbsOf } from './subresources.js';
import { GIT_VERSION } from './version.js';

/**
 * kubectl 1.27/1.28 insist on GET /openapi/v2 answering 200 as protobuf before `apply -f`; an empty
 * Document is enough, and Go's mime parser needs this spelling of the type.
 */
export const OPENAPI_V2_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

const PATCH_SCHEMA_REF = { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' };

/**
 * The OpenAPI v3 documents kubectl reads to decide on server-side field validation: for each kind a
 * `patch` operation with `x-kubernetes-group-version-kind` and a `fieldValidation` query parameter. The
 * strategic-merge content type is deliberately not advertised: kubectl would then compute client-side
 * apply patches from these (schema-less) documents instead of its built-in types.
 */
export class OpenApiV3 {
  private readonly documents = new Map<string, { body: unknown; hash: string }>();

  constructor(groups: GroupVersions[]) {
    for (const entry of groups) {
      for (const version of entry.versions) {
        const path = entry.group ? `apis/${entry.group}/${version}` : `api/${version}`;
        const body = groupVersionDocument(entry.group, version, entry.resources.get(version) ?? []);
        this.documents.set(path, { body, hash: createHash('sha512').update(JSON.stringify(body)).digest('hex').toUpperCase() });
      }
    }
  }

  /** GET /openapi/v3 */
  root() {
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const [path, { hash }] of this.documents) paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
    return { paths };
  }

  /** GET /openapi/v3/api/v1, /openapi/v3/apis/<group>/<version> */
  document(path: string): unknown {
    return this.documents.get(path)?.body;
  }
}

function groupVersionDocument(group: string, version: string, definitions: ResourceDefinition[]) {
  const paths: Record<string, unknown> = {};
  for (const definition of definitions) {
    if (!verbsOf(definition).includes('patch')) continue;
    const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const path = definition.namespaced ? `${base}/namespaces/{namespace}/${definition.resource}/{name}` : `${base}/${definition.resource}/{name}`;
    paths[path] = {
      parameters: [
        pathParameter('name', `name of the ${definition.kind}`),
        ...(definition.namespaced ? [pathParameter('namespace', 'object name and auth scope, such as for teams and projects')] : []),
      ],
      patch: {
        description: `partially update the specified ${definition.kind}`,
        operationId: `patch${definition.kind}`,
        parameters: [
          queryParameter('dryRun', 'When present, indicates that modifications should not be persisted.'),
          queryParameter('fieldManager', 'A name associated with the actor or entity that is making these changes.'),
          queryParameter('fieldValidation', 'How the server handles unknown or duplicate fields: Ignore, Warn or Strict.'),
          {
            name: 'force',
            in: 'query',
            description: 'Force apply requests to take ownership of conflicting fields.',
            schema: { type: 'boolean', uniqueItems: true },
          },
        ],
        requestBody: {
          content: {
            'application/apply-patch+yaml': { schema: PATCH_SCHEMA_REF },
            'application/json-patch+json': { schema: PATCH_SCHEMA_REF },
            'application/merge-patch+json': { schema: PATCH_SCHEMA_REF },
          },
          required: true,
        },
        responses: { '200': { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } } },
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group, version, kind: definition.kind },
      },
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: GIT_VERSION },
    paths,
    components: {
      schemas: {
        'io.k8s.apimachinery.pkg.apis.meta.v1.Patch': {
          description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
          type: 'object',
        },
      },
    },
  };
}

function pathParameter(name: string, description: string) {
  return { name, in: 'path', description, required: true, schema: { type: 'string', uniqueItems: true } };
}

function queryParameter(name: string, description: string) {
  return { name, in: 'query', description, schema: { type: 'string', uniqueItems: true } };
}
