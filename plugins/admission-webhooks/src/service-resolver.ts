// Resolves a webhook's service reference to an address to dial. Skiff has no service proxy yet, so a
// Service's port is followed to a ready endpoint of its EndpointSlices (or, without slices, of its
// Endpoints) rather than to its ClusterIP. The caches start with the first service reference.
import { RESOURCES, type EndpointSlice, type Endpoints, type Service } from '@skiff/api';
import { SharedInformer } from '@skiff/client';
import type { ApiClient, Logger } from '@skiff/kernel';
import { SERVICE_NAME_LABEL } from './names.js';

const RETRY = { initialMs: 100, maxMs: 5_000 };
const BY_SERVICE = 'admission-webhooks/by-service';

export interface ServiceReference {
  namespace: string;
  name: string;
  port: number;
}

export interface ResolvedAddress {
  host: string;
  port: number;
}

/** Finds where a service's port is served, from cached Services, EndpointSlices and Endpoints. */
export class ServiceResolver {
  private caches?: { services: SharedInformer<Service>; slices: SharedInformer<EndpointSlice>; endpoints: SharedInformer<Endpoints> };
  private next = 0;

  constructor(
    private readonly client: ApiClient,
    private readonly logger: Logger,
    private readonly signal: AbortSignal,
  ) {}

  private started() {
    if (this.caches) return this.caches;
    const settings = { resyncMs: 0, logger: this.logger, retry: RETRY };
    const services = new SharedInformer<Service>(this.client, RESOURCES.services, {}, settings);
    const slices = new SharedInformer<EndpointSlice>(this.client, RESOURCES.endpointslices, {}, settings);
    const endpoints = new SharedInformer<Endpoints>(this.client, RESOURCES.endpoints, {}, settings);
    slices.addIndex(BY_SERVICE, (slice) => {
      const service = slice.metadata.labels?.[SERVICE_NAME_LABEL];
      return service ? [`${slice.metadata.namespace ?? ''}/${service}`] : [];
    });
    for (const informer of [services, slices, endpoints]) void informer.run(this.signal);
    this.caches = { services, slices, endpoints };
    return this.caches;
  }

  /** Waits (until `signal` aborts) for the caches' first lists. */
  private async synced(signal: AbortSignal) {
    const caches = this.started();
    const all = AbortSignal.any([signal, this.signal]);
    await Promise.all([caches.services.waitForSync(all), caches.slices.waitForSync(all), caches.endpoints.waitForSync(all)]);
    return caches;
  }

  /** A ready address serving `reference`, taken in turn when there are several; throws when there is none. */
  async resolve(reference: ServiceReference, signal: AbortSignal): Promise<ResolvedAddress> {
    const { services, slices, endpoints } = await this.synced(signal);
    const key = `${reference.namespace}/${reference.name}`;
    const service = services.get(key);
    if (!service) throw new Error(`service "${reference.name}" not found`);
    const servicePort = (service.spec?.ports ?? []).find((p) => p.port === reference.port);
    if (!servicePort) throw new Error(`no service port ${reference.port} found for service "${reference.name}"`);
    const portName = servicePort.name ?? '';
    const candidates: ResolvedAddress[] = [];
    const ownSlices = slices.byIndex(BY_SERVICE, key);
    for (const slice of ownSlices) {
      if (slice.addressType === 'FQDN') continue;
      const port = (slice.ports ?? []).find((p) => (p.name ?? '') === portName)?.port;
      if (port === undefined || port === null) continue;
      for (const endpoint of slice.endpoints ?? []) {
        if (endpoint.conditions?.ready === false) continue;
        for (const host of endpoint.addresses.slice(0, 1)) candidates.push({ host, port });
      }
    }
    if (ownSlices.length === 0) {
      for (const subset of endpoints.get(key)?.subsets ?? []) {
        const port = (subset.ports ?? []).find((p) => (p.name ?? '') === portName)?.port;
        if (port === undefined) continue;
        for (const address of subset.addresses ?? []) candidates.push({ host: address.ip, port });
      }
    }
    if (candidates.length === 0) throw new Error(`service "${reference.name}" has no ready endpoints for port ${reference.port}`);
    this.next = (this.next + 1) % candidates.length;
    return candidates[this.next % candidates.length]!;
  }
}
