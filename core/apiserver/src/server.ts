import { setMaxListeners } from 'node:events';
import { Readable } from 'node:stream';
import { KindHandlers } from './rest/handlers.js';
import { errors, isKubeObject, type UserInfo } from '@skiff/api';
import {
  AUTHORIZE_STAGE,
  CHAIN_STAGE,
  type AdmissionOutcome,
  type ApiHandler,
  type ApiRequest,
  type ApiResponse,
  type Hooks,
  type Logger,
  type Registry,
  type Tracer,
} from '@skiff/kernel';
import type { Store } from '@skiff/store';
import { Discovery } from './discovery/discovery.js';
import { ApiExtensionsImpl } from './extensions.js';
import { AuditRecorder, auditedStream } from './pipeline/audit.js';
import { authenticate, skipFailingAuthenticators } from './pipeline/authenticate.js';
import { authorize, authzAttributes, skipFailingAuthorizers } from './pipeline/authorize.js';
import { impersonate } from './pipeline/impersonation.js';
import { decodeBody, type DecodedBody } from './pipeline/decode-body.js';
import { errorResponse } from './pipeline/error-response.js';
import { admitFlow, ObjectCounts, releaseWhenComplete, type FlowAdmission } from './pipeline/flow-control.js';
import { LoopbackTokens } from './pipeline/loopback-tokens.js';
import { parseRequestInfo } from './pipeline/request-info.js';
import { traceRequest } from './pipeline/trace.js';
import { ApiServerMetrics } from './metrics/server-metrics.js';
import { InitializerRegistryImpl } from './registry/initializer-registry.js';
import { ResourceRegistryImpl } from './registry/resource-registry.js';
import type { RestContext, ServerCore } from './rest/context.js';
import { routeResource } from './rest/route.js';

export const APISERVER_NAME = '@skiff/apiserver';
/** Members may do anything (Kubernetes' system:masters). */
const PRIVILEGED_GROUP = 'system:masters';

export interface ApiServerOptions {
  hooks: Hooks;
  logger: Logger;
  registry?: ResourceRegistryImpl;
  initializers?: InitializerRegistryImpl;
  /** How often watches with `allowWatchBookmarks` get a BOOKMARK. Default: 60 s. */
  bookmarkIntervalMs?: number;
  /**
   * How long a get, list or watch at a resourceVersion newer than the store's revision waits for the
   * store to reach it before answering 504 Too large resource version. Default: 3 s, as Kubernetes.
   */
  resourceVersionWaitMs?: number;
  /** The kernel's metrics registry: the server measures its requests and store calls and serves GET /metrics (docs/metrics.md). */
  metrics?: Registry;
  /** This thread's place among the API server's threads (0, the default: the primary). */
  thread?: number;
  /** The kernel's tracer: requests it wants become traces (docs/tracing.md). */
  tracer?: Tracer;
}

const NO_BODY: DecodedBody = Object.freeze({ mediaType: 'application/json', value: undefined });

/**
 * The request pipeline, independent of transport: the HTTPS server and the in-process loopback client both
 * call `handle`. Stages: request info → authenticate → impersonation → flow control → authorize → decode → (per handler) type check →
 * defaults → mutate → validate → initializers → store, with audit events around the whole.
 */
export class ApiServer implements ApiHandler {
  readonly registry: ResourceRegistryImpl;
  readonly initializers: InitializerRegistryImpl;
  readonly handlers = new KindHandlers();
  /** What plugins add: handlers for subresources, extra paths (the `apiExtensions` component). */
  readonly extensions = new ApiExtensionsImpl(this.handlers, () => this.core);
  private readonly tokens = new LoopbackTokens();
  private readonly objectCounts: ObjectCounts;
  private stopping = new AbortController();
  private readonly discovery: Discovery;
  private core?: ServerCore;
  private readonly metrics?: ApiServerMetrics;
  /** host:port clients should use, reported by GET /api. */
  serverAddress = '';

  constructor(private readonly options: ApiServerOptions) {
    this.registry = options.registry ?? new ResourceRegistryImpl();
    this.initializers = options.initializers ?? new InitializerRegistryImpl();
    this.discovery = new Discovery(this.registry, () => this.serverAddress, this.extensions.delegated);
    this.objectCounts = new ObjectCounts(this.registry, () => this.core?.store);
    if (options.metrics)
      this.metrics = new ApiServerMetrics(options.metrics, { thread: options.thread ?? 0, resources: this.registry, extensions: this.extensions });
    skipFailingAuthenticators(options.hooks.authenticate);
    skipFailingAuthorizers(options.hooks.authorize);
    options.hooks.authenticate.tap({ name: APISERVER_NAME, stage: CHAIN_STAGE.LOOPBACK }, (request) => this.tokens.authenticate(request));
    // kube-apiserver's privileged-groups authorizer: system:masters may do anything, whatever else is configured.
    options.hooks.authorize.tap({ name: APISERVER_NAME, stage: AUTHORIZE_STAGE.PRIVILEGED_GROUPS }, (attributes) =>
      attributes.user.groups.includes(PRIVILEGED_GROUP) ? { decision: 'allow', reason: `member of ${PRIVILEGED_GROUP}` } : undefined,
    );
  }

  /** Connects the store: from now on resource requests are served. */
  start(store: Store): void {
    const { hooks, logger, bookmarkIntervalMs = 60_000, resourceVersionWaitMs = 3_000 } = this.options;
    this.stopping = new AbortController();
    // Every open watch listens for the server stopping: thousands of listeners are expected, not a leak.
    setMaxListeners(0, this.stopping.signal);
    this.core = {
      hooks,
      store: this.metrics?.instrument(store) ?? store,
      registry: this.registry,
      initializers: this.initializers,
      handlers: this.handlers,
      logger,
      bookmarkIntervalMs,
      resourceVersionWaitMs,
      stopping: this.stopping.signal,
    };
  }

  /** Ends every open watch; later requests get 503. */
  stop(): void {
    this.stopping.abort();
    this.core = undefined;
  }

  issueLoopbackToken(user: UserInfo): string {
    return this.tokens.issue(user);
  }

  handle(request: ApiRequest): Promise<ApiResponse> {
    return traceRequest(this.options.tracer, request, () => this.respond(request));
  }

  private async respond(request: ApiRequest): Promise<ApiResponse> {
    // Only taps count: isUsed() is always true, the kernel intercepts every hook to name plugins in errors.
    const audit = this.options.hooks.audit.taps.length > 0 ? new AuditRecorder(this.options.hooks, request) : undefined;
    let response: ApiResponse;
    let unexpected = false;
    const flow: FlowAdmission = { headers: {} };
    const started = this.metrics?.begin(request);
    try {
      response = await this.serve(request, audit, flow);
    } catch (err) {
      ({ response, unexpected } = errorResponse(err, this.options.logger, request));
    }
    response = releaseWhenComplete(response, flow);
    if (started !== undefined) response = this.metrics!.end(request, flow.info, response, started);
    if (!audit) return response;
    if (response.stream) {
      const started = response;
      return { ...{}, ...response, stream: auditedStream(response.stream, () => audit.responseComplete(started, false)) };
    }
    audit.responseComplete(response, unexpected);
    return response;
  }

  private async serve(request: ApiRequest, audit: AuditRecorder | undefined, flow: FlowAdmission): Promise<ApiResponse> {
    const core = this.core;
    if (!core) throw errors.unavailable('the API server is not serving (starting or stopping)');
    const info = (flow.info = parseRequestInfo(request.method, request.path, request.query));
    audit?.requestReceived(info);
    const authenticated = await authenticate(core.hooks, request);
    const user = await impersonate(core.hooks, request.headers, authenticated);
    if (audit) {
      audit.user = authenticated;
      if (user !== authenticated) audit.impersonatedUser = user;
    }
    await admitFlow(core.hooks, this.objectCounts, request, info, user, flow);
    await authorize(core.hooks, authzAttributes(user, info));
    const delegated = this.extensions.delegated.forPath(request.path);
    if (delegated && !this.registry.list().some((definition) => definition.group === delegated.group && definition.version === delegated.version)) {
      return delegated.serve(request, user);
    }
    if (!info.isResourceRequest) return (await this.extensions.serve(request)) ?? this.discovery.serve(request);

    const definition = this.registry.getVersion(info.apiGroup, info.apiVersion, info.resource);
    if (!definition) throw errors.pathNotFound(request.path);
    // A streamed body (the proxy subresources) is the handler's to read.
    const body = request.method === 'GET' || request.body instanceof Readable ? NO_BODY : decodeBody(request.body, request.headers['content-type']);
    const ctx: RestContext = { core, request, info, user, definition, dryRun: dryRunOf(request.query), warnings: [], finishers: [], auditAnnotations: {} };
    if (audit) audit.annotations = ctx.auditAnnotations;
    if (body.duplicateFields) ctx.duplicateFields = body.duplicateFields;
    if (body.numberLiterals) ctx.numberLiterals = body.numberLiterals;
    try {
      const response = await routeResource(ctx, body);
      if (ctx.finishers.length)
        finish(ctx.finishers, { succeeded: response.status < 300, object: isKubeObject(response.body) ? response.body : undefined }, core.logger);
      return response;
    } catch (err) {
      if (ctx.finishers.length) finish(ctx.finishers, { succeeded: false }, core.logger);
      throw err;
    }
  }
}

/** Runs admission taps' onFinished callbacks; one that throws is logged and does not change the answer. */
function finish(finishers: ((outcome: AdmissionOutcome) => void)[], outcome: AdmissionOutcome, logger: Logger): void {
  const result = outcome.succeeded && outcome.object ? outcome : { succeeded: outcome.succeeded };
  for (const finisher of finishers) {
    try {
      finisher(result);
    } catch (err) {
      logger.warn({ err }, 'an admission onFinished callback failed');
    }
  }
}

function dryRunOf(query: Record<string, string | undefined>): boolean {
  const value = query.dryRun;
  if (value === undefined || value === '') return false;
  if (value === 'All') return true;
  throw errors.badRequest(`invalid dryRun value ${JSON.stringify(value)}: the only supported value is "All"`);
}
