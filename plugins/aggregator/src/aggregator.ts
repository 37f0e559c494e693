import { errorMessage, errors, isApiError, RESOURCES, type APIService, type Endpoints, type Service } from '@skiff/api';
import { forwardRequest, type ApiExtensions, type DiscoveredResource } from '@skiff/apiserver';
import { SharedInformerFactory } from '@skiff/client';
import type { ApiClient, ApiRequest, ApiResponse, Informer, Logger } from '@skiff/kernel';
import { LOCAL_CONDITION, PASSED_CONDITION, withAvailability, type Availability } from './availability.js';
import { backendTls, isResolved, resolveBackend, type ServiceLookup } from './backend.js';
import type { FrontProxyIdentity } from './front-proxy.js';
import { DISCOVERY_CHECK_USER } from './names.js';

/** How long the discovery check waits for a backend (kube-aggregator: 5 s). */
const DISCOVERY_TIMEOUT_MS = 5_000;

export interface AggregatorOptions {
  client: ApiClient;
  extensions: ApiExtensions;
  identity: FrontProxyIdentity;
  logger: Logger;
  /** How often every APIService with a service is checked again, besides on changes. */
  recheckMs: number;
}

interface Delegation {
  apiService: APIService;
  remove: () => void;
  available: boolean;
  resources?: DiscoveredResource[];
}

/**
 * API aggregation: each APIService with a service gets its group/version delegated to a proxy that forwards the
 * request to an endpoint of that Service over HTTPS, with the user in the front-proxy headers; and its Available
 * condition is kept as kube-aggregator's availability controller keeps it (Local, ServiceNotFound,
 * ServicePortError, EndpointsNotFound, MissingEndpoints, FailedDiscoveryCheck, Passed). Requests to an
 * APIService that is not available answer 503.
 */
export class Aggregator {
  private readonly delegations = new Map<string, Delegation>();
  private readonly pending = new Set<string>();
  private running: Promise<void> | undefined;
  private apiServices!: Informer<APIService>;
  private services!: Informer<Service>;
  private endpoints!: Informer<Endpoints>;
  private readonly lookup: ServiceLookup = {
    service: (namespace, name) => this.services.get(`${namespace}/${name}`),
    endpoints: (namespace, name) => this.endpoints.get(`${namespace}/${name}`),
  };

  constructor(private readonly options: AggregatorOptions) {}

  async start(signal: AbortSignal): Promise<void> {
    const factory = new SharedInformerFactory(this.options.client, { logger: this.options.logger });
    this.apiServices = factory.informer<APIService>(RESOURCES.apiservices);
    this.services = factory.informer<Service>(RESOURCES.services);
    this.endpoints = factory.informer<Endpoints>(RESOURCES.endpoints);
    this.apiServices.addHandlers({
      add: (object) => this.enqueue(object.metadata.name!),
      update: (_old, object) => this.enqueue(object.metadata.name!),
      delete: (object) => this.enqueue(object.metadata.name!),
    });
    // A Service or its Endpoints changing changes the APIServices behind it.
    const touched = (object: Service | Endpoints) => {
      for (const apiService of this.apiServices.list()) {
        const ref = apiService.spec?.service;
        if (ref?.namespace === object.metadata.namespace && ref?.name === object.metadata.name) this.enqueue(apiService.metadata.name!);
      }
    };
    for (const informer of [this.services, this.endpoints] as Informer<Service | Endpoints>[]) {
      informer.addHandlers({ add: touched, update: (_old, object) => touched(object), delete: touched });
    }
    factory.start(signal);
    await factory.waitForSync(signal);
    const timer = setInterval(() => {
      for (const apiService of this.apiServices.list()) if (apiService.spec?.service) this.enqueue(apiService.metadata.name!);
    }, this.options.recheckMs);
    timer.unref();
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(timer);
        for (const delegation of this.delegations.values()) delegation.remove();
        this.delegations.clear();
      },
      { once: true },
    );
    for (const apiService of this.apiServices.list()) this.enqueue(apiService.metadata.name!);
  }

  /** Resolves when every queued APIService has been synced (tests wait on it). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private enqueue(name: string): void {
    this.pending.add(name);
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  private async drain(): Promise<void> {
    for (const name of this.pending) {
      this.pending.delete(name);
      try {
        await this.sync(name);
      } catch (err) {
        this.options.logger.warn({ err, apiService: name }, 'syncing an APIService failed');
      }
    }
  }

  private async sync(name: string): Promise<void> {
    const apiService = this.apiServices.get(name);
    const delegation = this.delegations.get(name);
    if (!apiService?.spec?.service || !apiService.spec.group) {
      delegation?.remove();
      this.delegations.delete(name);
      if (apiService && !apiService.spec?.service) await this.writeAvailability(apiService, { ...LOCAL_CONDITION });
      return;
    }
    const current = this.delegate(name, apiService, delegation);
    const availability = await this.check(current);
    current.available = availability.status === 'True';
    await this.writeAvailability(apiService, availability);
  }

  /** The delegation of the APIService's group/version, made or moved when the spec changed. */
  private delegate(name: string, apiService: APIService, existing: Delegation | undefined): Delegation {
    const spec = apiService.spec!;
    const old = existing?.apiService.spec;
    if (
      existing &&
      old?.group === spec.group &&
      old?.version === spec.version &&
      old?.groupPriorityMinimum === spec.groupPriorityMinimum &&
      old?.versionPriority === spec.versionPriority
    ) {
      existing.apiService = apiService;
      return existing;
    }
    existing?.remove();
    const delegation: Delegation = { apiService, available: existing?.available ?? false, remove: () => undefined };
    delegation.remove = this.options.extensions.delegate({
      group: spec.group!,
      version: spec.version!,
      groupPriorityMinimum: spec.groupPriorityMinimum ?? 0,
      versionPriority: spec.versionPriority ?? 0,
      serve: (request, user) => this.proxy(delegation, request, user),
      resources: () => delegation.resources,
    });
    this.delegations.set(name, delegation);
    return delegation;
  }

  private async proxy(delegation: Delegation, request: ApiRequest, user: Parameters<typeof forwardRequest>[0]['identity']): Promise<ApiResponse> {
    const { apiService } = delegation;
    const backend = resolveBackend(apiService, this.lookup);
    if (!delegation.available || !isResolved(backend)) throw errors.unavailable('service unavailable');
    return forwardRequest({
      request,
      scheme: 'https',
      host: backend.host,
      port: String(backend.port),
      path: request.path,
      tls: backendTls(apiService, this.options.identity),
      aggregated: true,
      ...(user ? { identity: user } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
    });
  }

  /** kube-aggregator's checks: the Service, its port, its endpoints, then a GET of the group/version's discovery at the backend. */
  private async check(delegation: Delegation): Promise<Availability> {
    const { apiService } = delegation;
    const backend = resolveBackend(apiService, this.lookup);
    if (!isResolved(backend)) return { status: 'False', ...backend };
    const path = `/apis/${apiService.spec!.group}/${apiService.spec!.version}`;
    const url = `https://${backend.host.includes(':') ? `[${backend.host}]` : backend.host}:${backend.port}${path}`;
    const failure = (detail: string): Availability => ({
      status: 'False',
      reason: 'FailedDiscoveryCheck',
      message: `failing or missing response from ${url}: ${detail}`,
    });
    try {
      const response = await forwardRequest({
        request: { method: 'GET', path, query: {}, headers: { accept: 'application/json' } },
        scheme: 'https',
        host: backend.host,
        port: String(backend.port),
        path,
        tls: backendTls(apiService, this.options.identity),
        identity: { ...{}, ...DISCOVERY_CHECK_USER, groups: [...DISCOVERY_CHECK_USER.groups] },
        signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS),
      });
      const body = await collect(response);
      if (response.status < 200 || response.status >= 300) {
        if (response.status < 400 && response.status >= 300) return { ...{}, ...PASSED_CONDITION, status: 'True' };
        return failure(`bad status from ${url}: ${response.status}`);
      }
      delegation.resources = resourcesOf(body);
      return { ...{}, ...PASSED_CONDITION, status: 'True' };
    } catch (err) {
      return failure(isApiError(err) ? err.message : errorMessage(err));
    }
  }

  private async writeAvailability(apiService: APIService, availability: Availability): Promise<void> {
    const conditions = withAvailability(apiService, availability, new Date());
    if (!conditions) return;
    try {
      await this.options.client.updateStatus(RESOURCES.apiservices, { ...{}, ...apiService, status: { ...{}, ...apiService.status, conditions } });
    } catch (err) {
      // A newer version is on its way through the informer, and with it another sync.
      if (!isApiError(err, 'Conflict') && !isApiError(err, 'NotFound')) throw err;
    }
  }
}

async function collect(response: ApiResponse): Promise<string> {
  if (!response.textStream) return typeof response.body === 'string' ? response.body : '';
  const chunks: Buffer[] = [];
  for await (const chunk of response.textStream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** The resources of an APIResourceList body, for aggregated discovery; undefined when the body is no such list. */
function resourcesOf(body: string): DiscoveredResource[] | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    const resources = (parsed as { resources?: unknown }).resources;
    return Array.isArray(resources) ? (resources.filter((entry) => typeof entry?.name === 'string') as DiscoveredResource[]) : undefined;
  } catch {
    return undefined;
  }
}
