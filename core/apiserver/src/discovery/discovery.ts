import { createHash } from 'node:crypto';
import { errors } from '@skiff/api';
import type { ApiRequest, ApiResponse } from '@skiff/kernel';
import type { ResourceRegistryImpl } from '../registry/resource-registry.js';
import { json } from '../rest/respond.js';
import { aggregatedContentType, aggregatedDiscovery, aggregatedVersionOf } from './aggregated.js';
import { delegatedApiGroup, delegatedDiscoveryItem, type DelegatedApis } from './delegated.js';
import { servedGroups, type GroupVersions } from './groups.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions } from './legacy.js';
import { OPENAPI_V2_CONTENT_TYPE, OpenApiV3 } from './openapi.js';
import { openApiV2Format, openApiV2Json, openApiV2Protobuf } from './openapi-v2.js';
import { versionInfo } from './version.js';

/** An If-None-Match header's verdict for an entity tag: `*` or any listed tag, compared weakly. */
function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

const HEALTH_PATHS = new Set(['healthz', 'livez', 'readyz']);
const TEXT = Object.freeze({ 'content-type': 'text/plain; charset=utf-8' });
const JSON_TYPE = Object.freeze({ 'content-type': 'application/json' });

/**
 * The non-resource paths: /version, health checks, discovery (legacy and aggregated) and OpenAPI. The
 * documents derive from the resource registry and are rebuilt only when it changes.
 */
export class Discovery {
  private built = -1;
  private groups: GroupVersions[] = [];
  private openapi = new OpenApiV3([]);
  private openapiV2?: { json: string; etag: string };
  private openapiV2Protobuf?: Buffer;

  constructor(
    private readonly registry: ResourceRegistryImpl,
    private readonly serverAddress: () => string,
    /** Groups other servers answer (API aggregation): listed after the served ones. */
    private readonly delegated?: DelegatedApis,
  ) {}

  serve(request: ApiRequest): ApiResponse {
    const parts = request.path.split('/').filter(Boolean);
    if (request.method !== 'GET')
      throw errors.methodNotAllowed(`the server does not allow this method on the requested path (${request.method} ${request.path})`);
    const [first, second, third] = parts;
    if (parts.length === 0) return json({ paths: this.paths() });
    if (first === 'version' && parts.length === 1) return json(versionInfo());
    if (HEALTH_PATHS.has(first!)) return { status: 200, headers: TEXT, body: 'ok' };
    if (first === 'openapi') return this.serveOpenApi(parts.slice(1), request);
    this.refresh();
    if (first === 'api') {
      if (parts.length === 1) return this.discoveryRoot(request, true) ?? json(apiVersions(this.serverAddress()));
      if (parts.length === 2) return this.resourceList('', second!, request.path);
    }
    if (first === 'apis') {
      if (parts.length === 1) {
        const list = apiGroupList(this.groups);
        return this.discoveryRoot(request, false) ?? json({ ...{}, ...list, groups: [...list.groups, ...this.delegatedGroups().map(delegatedApiGroup)] });
      }
      const entry = this.groups.find((candidate) => candidate.group === second && candidate.group !== '');
      const delegated = entry ? undefined : this.delegatedGroups().find((group) => group.name === second);
      if (delegated && parts.length === 2) return json({ kind: 'APIGroup', apiVersion: 'v1', ...delegatedApiGroup(delegated) });
      if (entry && parts.length === 2) return json({ kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(entry) });
      if (entry && parts.length === 3) return this.resourceList(second!, third!, request.path);
    }
    throw errors.pathNotFound(request.path);
  }

  private refresh(): void {
    if (this.built === this.registry.generation) return;
    this.groups = servedGroups(this.registry.list());
    this.openapi = new OpenApiV3(this.groups);
    this.openapiV2 = undefined;
    this.openapiV2Protobuf = undefined;
    this.built = this.registry.generation;
  }

  private discoveryRoot(request: ApiRequest, core: boolean): ApiResponse | undefined {
    const version = aggregatedVersionOf(request.headers.accept);
    if (!version) return undefined;
    const groups = this.groups.filter((entry) => (entry.group === '') === core);
    const body = aggregatedDiscovery(version, groups);
    if (!core) body.items.push(...(this.delegatedGroups().map(delegatedDiscoveryItem) as typeof body.items));
    return { status: 200, headers: { 'content-type': aggregatedContentType(version) }, body };
  }

  private resourceList(group: string, version: string, path: string): ApiResponse {
    const definitions = this.groups.find((entry) => entry.group === group)?.resources.get(version);
    if (!definitions) throw errors.pathNotFound(path);
    return json(apiResourceList(group, version, definitions));
  }

  private serveOpenApi(parts: string[], request: ApiRequest): ApiResponse {
    if (parts[0] === 'v2' && parts.length === 1) return this.serveOpenApiV2(request);
    if (parts[0] === 'v3') {
      this.refresh();
      if (parts.length === 1) return json(this.openapi.root());
      const document = this.openapi.document(parts.slice(1).join('/'));
      if (document) return { status: 200, headers: JSON_TYPE, body: document };
    }
    throw errors.pathNotFound(request.path);
  }

  /**
   * GET /openapi/v2 as kube-apiserver answers it: JSON unless the Accept header's preferred type is the
   * protobuf one (no header counts as any type), 406 when nothing offered matches; both forms carry the
   * JSON text's ETag, and a matching If-None-Match answers 304.
   */
  private serveOpenApiV2(request: ApiRequest): ApiResponse {
    const format = openApiV2Format(request.headers.accept);
    if (!format) return { status: 406, headers: { vary: 'Accept' } };
    this.refresh();
    if (!this.openapiV2) {
      const text = openApiV2Json(this.groups);
      this.openapiV2 = { json: text, etag: `"${createHash('sha512').update(text).digest('hex').toUpperCase()}"` };
    }
    const { json: text, etag } = this.openapiV2;
    if (etagMatches(request.headers['if-none-match'], etag)) return { status: 304, headers: { etag, vary: 'Accept' } };
    if (format === 'json') return { status: 200, headers: { ...{}, ...JSON_TYPE, etag, vary: 'Accept' }, body: text };
    this.openapiV2Protobuf ??= openApiV2Protobuf(this.groups);
    return { status: 200, headers: { 'content-type': OPENAPI_V2_CONTENT_TYPE, etag, vary: 'Accept' }, body: this.openapiV2Protobuf };
  }

  private paths(): string[] {
    this.refresh();
    const paths = ['/api', '/api/v1', '/apis', '/healthz', '/livez', '/openapi/v2', '/openapi/v3', '/readyz', '/version'];
    for (const entry of this.groups) {
      if (!entry.group) continue;
      paths.push(`/apis/${entry.group}`, ...entry.versions.map((version) => `/apis/${entry.group}/${version}`));
    }
    return paths.sort();
  }

  /** Delegated groups the API server does not serve itself. */
  private delegatedGroups() {
    return (this.delegated?.groups() ?? []).filter((group) => !this.groups.some((entry) => entry.group === group.name));
  }
}
