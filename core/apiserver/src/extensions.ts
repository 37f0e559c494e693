import { errors, isJsonObject, type KubeObject, type Node, type UserInfo } from '@skiff/api';
import type { ApiRequest, ApiResponse, NodeConnection, RouteDefinition } from '@skiff/kernel';
import { admissionRequest, mutate, validate } from './pipeline/admission.js';
import type { RestContext, ServerCore } from './rest/context.js';
import type { KindHandlers } from './rest/handlers.js';
import { objectKey } from './rest/keys.js';
import { json } from './rest/respond.js';
import { DelegatedApis, type DelegatedApi } from './discovery/delegated.js';
import type { NodeConnectionLookup } from './streaming/pod-target.js';

/** A resource request a plugin answers: it has passed authentication and authorization, its body is decoded. */
export interface ExtensionRequest {
  namespace: string;
  name: string;
  subresource: string;
  verb: string;
  user: UserInfo;
  /** `dryRun=All`: answer as usual but change nothing. */
  dryRun: boolean;
  query: Record<string, string | undefined>;
  /** The decoded body (JSON, YAML or protobuf); undefined for reads. */
  body: unknown;
}

/** What a plugin's resource handler answers: sent as JSON; throw an `ApiError` for a Status. */
export interface ExtensionResponse {
  status: number;
  body: unknown;
}

export type ExtensionHandler = (request: ExtensionRequest) => Promise<ExtensionResponse>;

/**
 * What plugins add to the API server besides kinds: behaviour for one verb of a resource or of one of its
 * subresources (serviceaccounts/token), paths outside /api and /apis (/openid/v1/jwks), and reads of stored
 * objects. Requests reach both kinds of handler after authentication, authorization and audit, like any other.
 * Provided as the `apiExtensions` component from the `components` hook on; handlers serve once the API server has started.
 */
export interface ApiExtensions {
  /** Answers `verb` on a resource or subresource; the resource must declare the subresource (discovery lists it). */
  handle(target: { group: string; resource: string; subresource?: string; verb: string }, handler: ExtensionHandler): void;
  /** Answers one exact non-resource path. */
  route(route: RouteDefinition): void;
  /** A stored object, read as the API server reads it (no request pipeline); undefined when absent or not served. */
  get<T extends KubeObject = KubeObject>(resource: { group: string; resource: string }, namespace: string, name: string): Promise<T | undefined>;
  /**
   * Hands a group/version the API server does not serve itself to another server (API aggregation): its requests
   * go to `api.serve`, discovery lists it. Returns the function that takes it back.
   */
  delegate(api: DelegatedApi): () => void;
  /**
   * How this API server reaches a node's kubelet, as it does for pod logs and exec: the kubelet in this process (from
   * an API server worker thread, the primary thread's), else over HTTPS at the address its Node reports. Undefined
   * when no such Node exists; throws a 500 Status when the Node reports no address.
   */
  nodeConnection(nodeName: string): Promise<NodeConnection | undefined>;
}

declare module '@skiff/kernel' {
  interface Components {
    /** Plugin handlers for subresources and extra paths, and reads of stored objects (see @skiff/apiserver's ApiExtensions). */
    apiExtensions: ApiExtensions;
  }
}

/** Runs the mutating and validating chains for a create of `value`; answers the admitted object, unfrozen. */
async function admitCreate(ctx: RestContext, value: unknown): Promise<unknown> {
  if (!isJsonObject(value)) return value;
  // Admission plugins read metadata from every object; a bare TokenRequest may come without it.
  const object = { ...{}, ...value, metadata: isJsonObject(value.metadata) ? value.metadata : {} } as KubeObject;
  const [group, version] = (object.apiVersion ?? '').includes('/') ? object.apiVersion!.split('/') : ['', object.apiVersion ?? ''];
  const kind = object.kind ? { group: group!, version: version!, kind: object.kind } : undefined;
  const admission = admissionRequest(ctx, { operation: 'CREATE', object, ...(kind ? { kind } : {}) });
  await mutate(ctx, admission);
  await validate(ctx, admission);
  const admitted = structuredClone(admission.object) as Record<string, unknown>;
  if (!isJsonObject(value.metadata) && Object.keys(admitted.metadata ?? {}).length === 0) delete admitted.metadata;
  return admitted;
}

export class ApiExtensionsImpl implements ApiExtensions {
  private readonly routes = new Map<string, RouteDefinition>();
  readonly delegated = new DelegatedApis();
  /** Set by the API server's start, once it knows how to reach kubelets. */
  nodes: NodeConnectionLookup | undefined;

  constructor(
    private readonly handlers: KindHandlers,
    private readonly core: () => ServerCore | undefined,
  ) {}

  handle(target: { group: string; resource: string; subresource?: string; verb: string }, handler: ExtensionHandler): void {
    this.handlers.register(target, async (ctx, body) => {
      const { info, user, dryRun, request } = ctx;
      // A create through a plugin's handler (a TokenRequest) is admitted like any other create, as kube-apiserver
      // admits it: NodeRestriction, webhooks and policies see it.
      const value = target.verb === 'create' ? await admitCreate(ctx, body.value) : body.value;
      const response = await handler({
        namespace: info.namespace,
        name: info.name,
        subresource: info.subresource,
        verb: info.verb,
        user,
        dryRun,
        query: request.query,
        body: value,
      });
      return json(response.body, response.status);
    });
  }

  delegate(api: DelegatedApi): () => void {
    return this.delegated.add(api);
  }

  async nodeConnection(nodeName: string): Promise<NodeConnection | undefined> {
    const local = await this.nodes?.local(nodeName);
    if (local) return local;
    if (!this.nodes?.remote) return undefined;
    const node = await this.get<Node>({ group: '', resource: 'nodes' }, '', nodeName);
    return node && this.nodes.remote(node);
  }

  route(route: RouteDefinition): void {
    this.routes.set(`${route.method} ${route.path}`, route);
  }

  /** The response of a plugin's path, or undefined when no plugin serves it. */
  serve(request: ApiRequest): Promise<ApiResponse> | undefined {
    return this.routes.get(`${request.method} ${request.path}`)?.handler(request);
  }

  async get<T extends KubeObject = KubeObject>(resource: { group: string; resource: string }, namespace: string, name: string): Promise<T | undefined> {
    const core = this.core();
    if (!core) throw errors.unavailable('the API server is not serving (starting or stopping)');
    const definition = core.registry.get(resource.group, resource.resource);
    if (!definition) return undefined;
    return (await core.store.get(objectKey(definition, namespace, name)))?.object as T | undefined;
  }
}
