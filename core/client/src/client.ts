import { resourcePath, type KubeList, type KubeObject, type ResourceType } from '@skiff/api';
import { currentTrace, traceParentOf, tracingActive } from '@skiff/kernel';
import type { ApiClient, DeleteCollectionOptions, DeleteOptions, ListOptions, PatchType, WatchEvent, WatchOptions } from '@skiff/kernel';
import { untilAborted } from './abortable.js';
import { ClientError } from './errors.js';
import type { Transport, TransportRequest } from './transport/types.js';

const PATCH_CONTENT_TYPES: Readonly<Record<PatchType, string>> = Object.freeze({
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
});

export interface PatchOptions {
  namespace?: string;
  /** Defaults to `json` for an array (RFC 6902 operations) and `merge` for anything else. */
  patchType?: PatchType;
  subresource?: string;
  /** Required for `apply`; recorded in managedFields for the others. */
  fieldManager?: string;
}

/** An `ApiClient` that owns its transport's pooled connections, and serves every optional verb. */
export interface SkiffClient extends ApiClient {
  deleteCollection(type: ResourceType, namespace: string | undefined, options?: DeleteCollectionOptions): Promise<void>;
  close(): void;
}

/** Builds the REST client over a transport (HTTPS or loopback); every method maps to one API request. */
export function createClient(transport: Transport): SkiffClient {
  return new RestClient(transport);
}

class RestClient implements SkiffClient {
  constructor(private readonly transport: Transport) {}

  async get<T extends KubeObject = KubeObject>(type: ResourceType, name: string, namespace?: string, options: { subresource?: string } = {}): Promise<T> {
    return this.send<T>({ method: 'GET', path: resourcePath(type, namespace, name, options.subresource) });
  }

  async list<T extends KubeObject = KubeObject>(type: ResourceType, namespace?: string, options: ListOptions = {}): Promise<KubeList<T>> {
    return this.send<KubeList<T>>({ method: 'GET', path: resourcePath(type, namespace), query: listQuery(options) });
  }

  async create<T extends KubeObject = KubeObject>(type: ResourceType, object: T, namespace = object.metadata.namespace): Promise<T> {
    return this.send<T>({ method: 'POST', path: resourcePath(type, namespace), body: object });
  }

  /** PUT keeps `metadata.resourceVersion`, so a concurrent change makes the server answer 409 Conflict. */
  async update<T extends KubeObject = KubeObject>(type: ResourceType, object: T, options: { subresource?: string } = {}): Promise<T> {
    const path = resourcePath(type, object.metadata.namespace, requireName(object, 'update', type), options.subresource);
    return this.send<T>({ method: 'PUT', path, body: object });
  }

  async updateStatus<T extends KubeObject = KubeObject>(type: ResourceType, object: T): Promise<T> {
    const path = resourcePath(type, object.metadata.namespace, requireName(object, 'update the status of', type), 'status');
    return this.send<T>({ method: 'PUT', path, body: object });
  }

  async patch<T extends KubeObject = KubeObject>(type: ResourceType, name: string, patch: unknown, options: PatchOptions = {}): Promise<T> {
    const patchType = options.patchType ?? (Array.isArray(patch) ? 'json' : 'merge');
    if (patchType === 'apply' && !options.fieldManager) {
      throw new ClientError('SKIFF_ERR_CLIENT_FIELD_MANAGER_REQUIRED', { resource: type.resource, name });
    }
    return this.send<T>({
      method: 'PATCH',
      path: resourcePath(type, options.namespace, name, options.subresource),
      query: defined({ fieldManager: options.fieldManager }),
      headers: { 'content-type': PATCH_CONTENT_TYPES[patchType] },
      body: patch,
    });
  }

  async delete(type: ResourceType, name: string, namespace?: string, options?: DeleteOptions): Promise<void> {
    const body = options ? { apiVersion: 'v1', kind: 'DeleteOptions', ...options } : undefined;
    await this.send({ method: 'DELETE', path: resourcePath(type, namespace, name), body });
  }

  /** The selectors travel in the query, as for a list; how each object is deleted in the DeleteOptions body. */
  async deleteCollection(type: ResourceType, namespace: string | undefined, options: DeleteCollectionOptions = {}): Promise<void> {
    const { labelSelector, fieldSelector, ...deleteOptions } = options;
    await this.send({
      method: 'DELETE',
      path: resourcePath(type, namespace),
      query: listQuery({ labelSelector, fieldSelector }),
      body: { apiVersion: 'v1', kind: 'DeleteOptions', ...deleteOptions },
    });
  }

  async createSubresource<T = unknown>(type: ResourceType, name: string, namespace: string, subresource: string, body: unknown): Promise<T> {
    return this.send<T>({ method: 'POST', path: resourcePath(type, namespace, name, subresource), body });
  }

  watch<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, options: WatchOptions): AsyncIterable<WatchEvent<T>> {
    return this.watchEvents(type, namespace, options) as AsyncIterable<WatchEvent<T>>;
  }

  close(): void {
    this.transport.close?.();
  }

  /**
   * Ends when `options.signal` aborts or the server closes the stream. However the consumer stops
   * (abort, `break`, an error), the request is aborted so the server releases the watch.
   */
  private async *watchEvents(type: ResourceType, namespace: string | undefined, options: WatchOptions): AsyncGenerator<WatchEvent> {
    if (options.signal?.aborted) return;
    const request = new AbortController();
    const abort = () => request.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', abort, { once: true });
    const path = resourcePath(type, namespace);
    try {
      const response = await this.transport.request({
        method: 'GET',
        path,
        query: {
          ...{},
          ...listQuery(options),
          ...defined({
            watch: 'true',
            allowWatchBookmarks: options.allowWatchBookmarks ? 'true' : undefined,
            timeoutSeconds: options.timeoutSeconds?.toString(),
          }),
        },
        headers: {},
        signal: request.signal,
      });
      if (!response.stream) {
        throw new ClientError('SKIFF_ERR_CLIENT_WATCH_DECODE', { path, detail: 'the server answered without an event stream' });
      }
      yield* untilAborted(response.stream, request.signal);
    } catch (err) {
      // Aborting while the request is still connecting is an ordinary end of the watch.
      if (!request.signal.aborted) throw err;
    } finally {
      options.signal?.removeEventListener('abort', abort);
      request.abort();
    }
  }

  /** `R` is what the caller's resource type holds: the server answers with objects of the kind asked for. */
  private async send<R>(request: Partial<TransportRequest> & Pick<TransportRequest, 'method' | 'path'>): Promise<R> {
    const traced = tracingActive() ? currentTrace() : undefined;
    const headers = traced ? { ...{}, ...request.headers, traceparent: traceParentOf(traced) } : (request.headers ?? {});
    const response = await this.transport.request({ query: {}, ...request, headers });
    return response.body as R;
  }
}

function listQuery(options: ListOptions): Record<string, string> {
  return defined({
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
    limit: options.limit?.toString(),
    continue: options.continue,
    resourceVersion: options.resourceVersion,
  });
}

function defined(values: Record<string, string | undefined>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) if (value !== undefined && value !== '') result[key] = value;
  return result;
}

function requireName(object: KubeObject, verb: string, type: ResourceType): string {
  const name = object.metadata.name;
  if (!name) throw new ClientError('SKIFF_ERR_CLIENT_OBJECT_NAME_REQUIRED', { verb, resource: type.resource });
  return name;
}
