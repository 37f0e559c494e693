import { RESOURCES, type Endpoints, type EndpointSlice, type Service } from '@skiff/api';
import { objectKey, WorkQueue } from '@skiff/client';
import { applyWrites, deleteObjects, runWhenSynced, WrittenObjects } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { planMirroring } from './mirror.js';
import { ANNOTATION, CONTROLLER_NAME, EVENT_REASON, LABEL, MANAGED_BY } from './names.js';

/** Informer index: the mirrored slices filed under `namespace/kubernetes.io/service-name`. */
export const MIRRORED_BY_SERVICE_INDEX = 'endpointslice-mirroring: namespace/kubernetes.io/service-name';

/** When the cache lags behind this controller's own writes, look again after this long if no event comes first. */
const STALE_CACHE_RECHECK_MS = 1000;

const isMirrored = (slice: EndpointSlice) => slice.metadata.labels?.[LABEL.MANAGED_BY] === MANAGED_BY;

function serviceKeyOf(slice: EndpointSlice): string | undefined {
  const service = slice.metadata.labels?.[LABEL.SERVICE_NAME];
  return service ? `${slice.metadata.namespace}/${service}` : undefined;
}

/** Endpoints that are mirrored: not marked to be skipped, and no leader-election lock. */
function shouldMirror(endpoints: Endpoints): boolean {
  return endpoints.metadata.labels?.[LABEL.SKIP_MIRROR] !== 'true' && endpoints.metadata.annotations?.[ANNOTATION.LEADER] === undefined;
}

/** A Service without a selector: someone else writes its Endpoints. */
const hasSelector = (service: Service) => service.spec?.selector !== undefined && service.spec.selector !== null;

export interface MirroringControllerSettings {
  maxEndpointsPerSubset: number;
}

/**
 * Mirrors the custom core/v1 Endpoints of Services without a selector into EndpointSlices, so that
 * proxies and DNS reading slices see them too. Work is queued per Endpoints key (`namespace/name`, the
 * Service's) on a change of the Endpoints, of the Service's selector, or of a mirrored slice.
 */
export class EndpointSliceMirroringController {
  private readonly queue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly endpoints: Informer<Endpoints>;
  private readonly services: Informer<Service>;
  private readonly slices: Informer<EndpointSlice>;
  private readonly written = new WrittenObjects<EndpointSlice>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly settings: MirroringControllerSettings,
  ) {
    this.endpoints = ctx.informers.informer<Endpoints>(RESOURCES.endpoints);
    this.services = ctx.informers.informer<Service>(RESOURCES.services);
    this.slices = ctx.informers.informer<EndpointSlice>(RESOURCES.endpointslices);
    this.slices.addIndex(MIRRORED_BY_SERVICE_INDEX, (slice) => {
      const key = isMirrored(slice) ? serviceKeyOf(slice) : undefined;
      return key ? [key] : [];
    });

    const enqueue = (object: Endpoints | Service) => this.queue.add(objectKey(object));
    this.endpoints.addHandlers({
      add: (endpoints) => shouldMirror(endpoints) && enqueue(endpoints),
      update: (old, endpoints) => (shouldMirror(old) || shouldMirror(endpoints)) && enqueue(endpoints),
      delete: (endpoints) => shouldMirror(endpoints) && enqueue(endpoints),
    });
    this.services.addHandlers({
      add: (service) => !hasSelector(service) && enqueue(service),
      update: (old, service) => hasSelector(old) !== hasSelector(service) && enqueue(service),
      delete: (service) => !hasSelector(service) && enqueue(service),
    });
    const sliceChanged = (slice: EndpointSlice) => {
      const key = serviceKeyOf(slice);
      if (key) this.queue.add(key);
    };
    this.slices.addHandlers({
      add: (slice) => isMirrored(slice) && sliceChanged(slice),
      update: (old, slice) => {
        if (isMirrored(slice) || isMirrored(old)) sliceChanged(slice);
        if (isMirrored(old) && serviceKeyOf(old) !== serviceKeyOf(slice)) sliceChanged(old);
      },
      delete: (slice) => isMirrored(slice) && sliceChanged(slice),
    });
  }

  /** Waits for the caches, then syncs until the context's signal aborts. Slices left by Endpoints deleted meanwhile are queued by their informer's first adds. */
  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, {
      informers: [this.endpoints, this.services, this.slices],
      queue: this.queue,
      workers,
      sync: (key) => this.sync(key),
    });
  }

  /** Brings the slices mirrored for one Endpoints object (`namespace/name`) in line with it. */
  async sync(key: string): Promise<void> {
    const mirrored = this.slices.byIndex(MIRRORED_BY_SERVICE_INDEX, key).filter((slice) => !slice.metadata.deletionTimestamp);
    const endpoints = this.endpoints.get(key);
    const service = this.services.get(key);
    if (!endpoints || !shouldMirror(endpoints) || !service || hasSelector(service)) {
      this.written.forget(key);
      await this.deleteSlices(mirrored);
      return;
    }
    if (this.written.stale(key, mirrored)) {
      this.queue.addAfter(key, STALE_CACHE_RECHECK_MS);
      return;
    }
    const { maxEndpointsPerSubset } = this.settings;
    const plan = planMirroring(endpoints, mirrored, maxEndpointsPerSubset);
    const { recorder } = this.ctx;
    if (plan.invalid > 0)
      recorder.event(endpoints, 'Warning', EVENT_REASON.INVALID_IP_ADDRESS, `Skipped ${plan.invalid} invalid IP addresses when mirroring to EndpointSlices`);
    if (plan.skipped > plan.invalid)
      recorder.event(
        endpoints,
        'Warning',
        EVENT_REASON.TOO_MANY_ADDRESSES,
        `${plan.skipped} addresses were not mirrored: at most ${maxEndpointsPerSubset} per Endpoints subset go to EndpointSlices`,
      );

    await applyWrites(this.ctx.client, RESOURCES.endpointslices, plan, {
      key,
      written: this.written,
      namespace: endpoints.metadata.namespace,
      create: !endpoints.metadata.deletionTimestamp,
    });
  }

  private deleteSlices(slices: readonly EndpointSlice[]): Promise<void> {
    return deleteObjects(this.ctx.client, RESOURCES.endpointslices, slices);
  }
}
