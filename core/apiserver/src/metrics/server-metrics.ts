import { gatherMetrics, METRICS_CONTENT_TYPE, type ApiRequest, type ApiResponse, type Registry } from '@skiff/kernel';
import type { Store } from '@skiff/store';
import type { ApiExtensionsImpl } from '../extensions.js';
import type { RequestInfo } from '../pipeline/request-info.js';
import type { ResourceRegistryImpl } from '../registry/resource-registry.js';
import { InstrumentedStore } from '../storage/instrumented-store.js';
import { RequestMetrics } from './request-metrics.js';
import { registerStorageObjects } from './storage-objects.js';

export interface ApiServerMetricsOptions {
  /** This thread's place among the API server's threads (0: the primary). */
  thread: number;
  resources: ResourceRegistryImpl;
  extensions: ApiExtensionsImpl;
}

/**
 * Everything the API server measures, in one place: request metrics (`begin`/`end` around each request), store
 * metrics (`instrument` wraps the store), object counts, and the `GET /metrics` route — a non-resource path like
 * /healthz, so authentication, flow control and authorization (RBAC's system:monitoring role) apply to it.
 */
export class ApiServerMetrics {
  private readonly requests: RequestMetrics;
  private store: Store | undefined;

  constructor(
    private readonly registry: Registry,
    options: ApiServerMetricsOptions,
  ) {
    const { resources } = options;
    this.requests = new RequestMetrics(registry, {
      thread: options.thread,
      served: (info) => resources.getVersion(info.apiGroup, info.apiVersion, info.resource) !== undefined,
    });
    if (options.thread === 0) registerStorageObjects(registry, resources, () => this.store);
    options.extensions.route({ method: 'GET', path: '/metrics', handler: () => this.scrape() });
  }

  begin(request: ApiRequest): number {
    return this.requests.begin(request);
  }

  end(request: ApiRequest, info: RequestInfo | undefined, response: ApiResponse, started: number): ApiResponse {
    return this.requests.end(request, info, response, started);
  }

  /** The store the API server should use: `store`, timed. */
  instrument(store: Store): Store {
    this.store = store;
    return new InstrumentedStore(store, this.registry);
  }

  private async scrape(): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    const gathered = await gatherMetrics(this.registry);
    return { status: 200, headers: { 'content-type': METRICS_CONTENT_TYPE }, body: await gathered.metrics() };
  }
}
