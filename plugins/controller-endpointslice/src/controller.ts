import {
  errorMessage,
  isSelectingService,
  RESOURCES,
  selectorMatches,
  servicesForPodEvent,
  type EndpointSlice,
  type Node,
  type Pod,
  type Service,
} from '@skiff/api';
import { objectKey, WorkQueue } from '@skiff/client';
import { applyWrites, deleteObjects, runWhenSynced, TriggerTimeTracker, WrittenObjects } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { EndpointSliceError } from './errors.js';
import { CONTROLLER_NAME, EVENT_REASON, LABEL, MANAGED_BY } from './names.js';
import { planSlices, type SlicePlan } from './slices.js';

/** Informer index: the controller's own slices filed under `namespace/service`. */
export const SLICES_BY_SERVICE_INDEX = 'endpointslice-controller: namespace/kubernetes.io/service-name';

const isManaged = (slice: EndpointSlice) => slice.metadata.labels?.[LABEL.MANAGED_BY] === MANAGED_BY;

function serviceKeyOf(slice: EndpointSlice): string | undefined {
  const service = slice.metadata.labels?.[LABEL.SERVICE_NAME];
  return service ? `${slice.metadata.namespace}/${service}` : undefined;
}

/** When the cache lags behind this controller's own writes, look again after this long if no event comes first. */
const STALE_CACHE_RECHECK_MS = 1000;

export interface EndpointSliceControllerSettings {
  maxEndpointsPerSlice: number;
}

/**
 * Keeps the EndpointSlices of every Service with a selector in line with the pods it selects: one endpoint
 * per pod with an IP, its readiness as conditions, grouped by the ports the pod serves, at most
 * `maxEndpointsPerSlice` per slice. Work is queued per Service on any change of the Service, of a pod it
 * selects (or selected), or of one of its slices.
 */
export class EndpointSliceController {
  private readonly queue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly services: Informer<Service>;
  private readonly pods: Informer<Pod>;
  private readonly slices: Informer<EndpointSlice>;
  private readonly nodes: Informer<Node>;
  private readonly triggerTimes = new TriggerTimeTracker();
  private readonly expectations = new WrittenObjects<EndpointSlice>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly settings: EndpointSliceControllerSettings,
  ) {
    this.services = ctx.informers.informer<Service>(RESOURCES.services);
    this.pods = ctx.informers.informer<Pod>(RESOURCES.pods);
    this.slices = ctx.informers.informer<EndpointSlice>(RESOURCES.endpointslices);
    this.nodes = ctx.informers.informer<Node>(RESOURCES.nodes);
    this.slices.addIndex(SLICES_BY_SERVICE_INDEX, (slice) => {
      const key = isManaged(slice) ? serviceKeyOf(slice) : undefined;
      return key ? [key] : [];
    });

    const enqueueService = (service: Service) => this.queue.add(objectKey(service));
    this.services.addHandlers({ add: enqueueService, update: (_old, service) => enqueueService(service), delete: enqueueService });
    this.pods.addHandlers({
      add: (pod) => this.podChanged(undefined, pod),
      update: (oldPod, pod) => this.podChanged(oldPod, pod),
      delete: (pod) => this.podChanged(undefined, pod),
    });
    const sliceChanged = (slice: EndpointSlice, deleted: boolean) => {
      if (deleted) this.expectations.observedDeletion(slice);
      else this.expectations.observed(slice);
      const key = serviceKeyOf(slice);
      if (key && isManaged(slice)) this.queue.add(key);
    };
    this.slices.addHandlers({
      add: (slice) => sliceChanged(slice, false),
      update: (old, slice) => {
        sliceChanged(slice, false);
        // A slice taken over by another manager leaves this controller's set: its Service may need a new one.
        if (isManaged(old) && !isManaged(slice)) sliceChanged(old, false);
      },
      delete: (slice) => sliceChanged(slice, true),
    });
  }

  /** Waits for the caches, then syncs Services until the context's signal aborts. */
  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, {
      informers: [this.services, this.pods, this.slices, this.nodes],
      queue: this.queue,
      workers,
      sync: (key) => this.sync(key),
    });
  }

  /** Brings the slices of one Service (`namespace/name`) in line with its pods. */
  async sync(key: string): Promise<void> {
    const service = this.services.get(key);
    const cached = this.slices.byIndex(SLICES_BY_SERVICE_INDEX, key).filter((slice) => !slice.metadata.deletionTimestamp);
    if (!service) {
      this.triggerTimes.forget(key);
      this.expectations.forget(key);
      await this.deleteSlices(cached);
      return;
    }
    if (!isSelectingService(service)) return;
    if (this.expectations.stale(key, cached)) {
      this.queue.addAfter(key, STALE_CACHE_RECHECK_MS);
      return;
    }
    const selector = service.spec!.selector!;
    const pods = this.pods.list(service.metadata.namespace).filter((pod) => selectorMatches(selector, pod.metadata.labels));
    const plan = planSlices({
      service,
      pods,
      existing: cached,
      node: (name) => this.nodes.get(name),
      maxEndpointsPerSlice: this.settings.maxEndpointsPerSlice,
      triggerTime: this.triggerTimes.compute(key, service, pods),
    });
    try {
      await this.apply(key, service, plan);
    } catch (err) {
      this.ctx.recorder.event(service, 'Warning', EVENT_REASON.FAILED_TO_UPDATE, `Error updating Endpoint Slices for Service ${key}: ${errorMessage(err)}`);
      throw err;
    }
    if (plan.podsOnUnknownNodes.length > 0)
      throw new EndpointSliceError('SKIFF_ERR_ENDPOINTSLICE_NODE_NOT_FOUND', { pods: plan.podsOnUnknownNodes.join(', '), service: key });
  }

  private apply(key: string, service: Service, plan: SlicePlan): Promise<void> {
    return applyWrites(this.ctx.client, RESOURCES.endpointslices, plan, {
      key,
      written: this.expectations,
      namespace: service.metadata.namespace,
      // New slices for a Service being deleted would race the garbage collector.
      create: !service.metadata.deletionTimestamp,
    });
  }

  private deleteSlices(slices: readonly EndpointSlice[]): Promise<void> {
    return deleteObjects(this.ctx.client, RESOURCES.endpointslices, slices);
  }

  private podChanged(oldPod: Pod | undefined, pod: Pod): void {
    const services = this.services.list(pod.metadata.namespace).filter(isSelectingService);
    for (const service of servicesForPodEvent(services, oldPod, pod)) this.queue.add(objectKey(service));
  }
}
