import type { UserInfo } from '@skiff/api';
import type { ApiRequest, ApiResponse, FlowControlGrant, FlowControlRequest, Hooks } from '@skiff/kernel';
import type { Store } from '@skiff/store';
import type { ResourceRegistryImpl } from '../registry/resource-registry.js';
import { collectionPrefix } from '../rest/keys.js';
import type { RequestInfo } from './request-info.js';

/** What a request's flow control left for its answer: the grant to release and the headers to add. */
export interface FlowAdmission {
  grant?: FlowControlGrant;
  headers: Record<string, string>;
  /** A long-running request (a watch, logs, proxy, exec, attach, port-forward): it holds its seats only while it starts, whatever shape its stream has. */
  longRunning?: boolean;
  /** What the request is about, once parsed (for the request metrics). */
  info?: RequestInfo;
}

/**
 * Runs the `flowControl` chain for one request (only when something taps it). What the taps decided is recorded
 * in `admission` before a refusal is thrown, so the refusal carries their headers too.
 */
/** Subresources kube-apiserver treats as long-running, as it does watches. */
const LONG_RUNNING_SUBRESOURCES: ReadonlySet<string> = new Set(['log', 'proxy', 'exec', 'attach', 'portforward']);

/** Whether a request only holds flow control's seats while it starts. */
export function isLongRunning(info: Pick<RequestInfo, 'verb' | 'subresource'>): boolean {
  return info.verb === 'watch' || LONG_RUNNING_SUBRESOURCES.has(info.subresource);
}

export async function admitFlow(
  hooks: Hooks,
  counts: ObjectCounts,
  request: ApiRequest,
  info: RequestInfo,
  user: UserInfo,
  admission: FlowAdmission,
): Promise<void> {
  if (hooks.flowControl.taps.length === 0) return;
  const flowRequest = new FlowRequest(user, info, request, admission.headers, counts);
  const grant = await hooks.flowControl.promise(flowRequest);
  if (!grant) return;
  admission.grant = grant;
  admission.longRunning = isLongRunning(info);
}

/** What a tap sees: one shape for every request (an object literal with a getter is slow to build). */
class FlowRequest implements FlowControlRequest {
  readonly verb: string;
  readonly isResourceRequest: boolean;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  readonly path: string;
  readonly query: Record<string, string | undefined>;

  constructor(
    readonly user: UserInfo,
    private readonly info: RequestInfo,
    private readonly request: ApiRequest,
    readonly responseHeaders: Record<string, string>,
    private readonly counts: ObjectCounts,
  ) {
    this.verb = info.verb;
    this.isResourceRequest = info.isResourceRequest;
    this.apiGroup = info.apiGroup;
    this.apiVersion = info.apiVersion;
    this.resource = info.resource;
    this.subresource = info.subresource;
    this.namespace = info.namespace;
    this.name = info.name;
    this.path = info.path;
    this.query = request.query;
  }

  /** The transport makes a request's signal on first use: only requests that wait ask for it. */
  get signal(): AbortSignal | undefined {
    return this.request.signal;
  }

  objectCount(): Promise<number | undefined> {
    return this.counts.forRequest(this.info);
  }
}

/**
 * Adds flow control's headers to the answer and releases its grant once the answer is complete: a streamed list
 * after its last chunk (the seats it holds are what bounds the memory of concurrent lists), anything else now —
 * a body is already built, and a watch or an upgraded connection is long-running, so it only holds its seats
 * while it starts, as in Kubernetes.
 */
export function releaseWhenComplete(response: ApiResponse, admission: FlowAdmission): ApiResponse {
  const withHeaders = Object.keys(admission.headers).length ? { ...{}, ...response, headers: { ...{}, ...response.headers, ...admission.headers } } : response;
  const grant = admission.grant;
  if (!grant) return withHeaders;
  if (withHeaders.textStream && !admission.longRunning) return { ...{}, ...withHeaders, textStream: releasedAtEnd(withHeaders.textStream, grant) };
  grant.release();
  return withHeaders;
}

async function* releasedAtEnd<T>(stream: AsyncIterable<T>, grant: FlowControlGrant): AsyncGenerator<T> {
  try {
    yield* stream;
  } finally {
    grant.release();
  }
}

/** How long a collection's object count is reused: lists come in bursts, and an estimate need not be exact. */
const COUNT_TTL_MS = 1000;
/** Past this many remembered collections the memory is cleared (namespaces come and go). */
const MAX_COUNTED = 10_000;

/** Object counts of collections, for flow control's estimate of what a list costs. */
export class ObjectCounts {
  private readonly counted = new Map<string, { count: number; at: number }>();

  constructor(
    private readonly registry: ResourceRegistryImpl,
    private readonly store: () => Store | undefined,
  ) {}

  async forRequest(info: RequestInfo): Promise<number | undefined> {
    const store = this.store();
    if (!info.isResourceRequest || !store) return undefined;
    const definition = this.registry.getVersion(info.apiGroup, info.apiVersion, info.resource);
    if (!definition) return undefined;
    const prefix = collectionPrefix(definition, info.namespace);
    const now = Date.now();
    const known = this.counted.get(prefix);
    if (known && now - known.at < COUNT_TTL_MS) return known.count;
    // One item and the count of the keys after it: a read of keys only, whatever the collection's size.
    const page = await store.list(prefix, { limit: 1 });
    const count = page.items.length + (page.remainingItemCount ?? 0);
    if (this.counted.size >= MAX_COUNTED) this.counted.clear();
    this.counted.set(prefix, { count, at: now });
    return count;
  }
}
