import {
  errorMessage,
  isApiError,
  isSelectingService,
  RESOURCES,
  selectorMatches,
  servicesForPodEvent,
  type Endpoints,
  type Pod,
  type Service,
} from '@skiff/api';
import { objectKey, WorkQueue } from '@skiff/client';
import { isNamespaceTerminating, runWhenSynced, TriggerTimeTracker } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { ANNOTATION, CONTROLLER_NAME, EVENT_REASON } from './names.js';
import { planEndpoints } from './subsets.js';

/** When the cache lags behind this controller's own last write, look again after this long if no event comes first. */
const STALE_CACHE_RECHECK_MS = 1000;

/** What the cache should stop showing once it has caught up with a write: the replaced version, or nothing at all. */
type Written = { replaced: string } | { created: true };

/**
 * Keeps the core/v1 Endpoints of every Service with a selector — named like the Service — listing the pods
 * it selects, and deletes them when the Service goes. Work is queued per Service on any change of the
 * Service or of a pod it selects (or selected), and when its Endpoints are deleted behind its back.
 */
export class EndpointsController {
  private readonly queue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly services: Informer<Service>;
  private readonly pods: Informer<Pod>;
  private readonly endpoints: Informer<Endpoints>;
  private readonly triggerTimes = new TriggerTimeTracker();
  private readonly written = new Map<string, Written>();

  constructor(private readonly ctx: ControllerContext) {
    this.services = ctx.informers.informer<Service>(RESOURCES.services);
    this.pods = ctx.informers.informer<Pod>(RESOURCES.pods);
    this.endpoints = ctx.informers.informer<Endpoints>(RESOURCES.endpoints);

    const enqueue = (object: Service | Endpoints) => this.queue.add(objectKey(object));
    this.services.addHandlers({ add: enqueue, update: (_old, service) => enqueue(service), delete: enqueue });
    this.pods.addHandlers({
      add: (pod) => this.podChanged(undefined, pod),
      update: (oldPod, pod) => this.podChanged(oldPod, pod),
      delete: (pod) => this.podChanged(undefined, pod),
    });
    const caughtUp = (endpoints: Endpoints) => {
      if (this.written.delete(objectKey(endpoints))) enqueue(endpoints);
    };
    this.endpoints.addHandlers({
      add: caughtUp,
      update: (_old, endpoints) => caughtUp(endpoints),
      delete: (endpoints) => {
        this.written.delete(objectKey(endpoints));
        enqueue(endpoints);
      },
    });
  }

  /** Waits for the caches, looks once at every Endpoints object (those left behind by a deleted Service go), then syncs Services until the signal aborts. */
  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, {
      informers: [this.services, this.pods, this.endpoints],
      queue: this.queue,
      workers,
      sync: (key) => this.sync(key),
      beforeWorkers: () => {
        for (const endpoints of this.endpoints.list()) if (!isLeaderLock(endpoints)) this.queue.add(objectKey(endpoints));
      },
    });
  }

  /** Brings the Endpoints of one Service (`namespace/name`) in line with its pods. */
  async sync(key: string): Promise<void> {
    const service = this.services.get(key);
    const current = this.endpoints.get(key);
    if (!service) {
      this.triggerTimes.forget(key);
      this.written.delete(key);
      if (current && !isLeaderLock(current)) await this.deleteEndpoints(current);
      return;
    }
    if (!isSelectingService(service)) return;
    if (this.cacheBehind(key, current)) {
      this.queue.addAfter(key, STALE_CACHE_RECHECK_MS);
      return;
    }
    const selector = service.spec!.selector!;
    const pods = this.pods.list(service.metadata.namespace).filter((pod) => selectorMatches(selector, pod.metadata.labels));
    const desired = planEndpoints({ service, pods, current, triggerTime: this.triggerTimes.compute(key, service, pods) });
    if (!desired) return;
    await this.write(key, service, desired, current);
  }

  private async write(key: string, service: Service, desired: Endpoints, current: Endpoints | undefined): Promise<void> {
    const { client, recorder } = this.ctx;
    try {
      if (current) {
        await client.update<Endpoints>(RESOURCES.endpoints, desired);
        this.written.set(key, { replaced: current.metadata.resourceVersion! });
      } else {
        await client.create<Endpoints>(RESOURCES.endpoints, desired, service.metadata.namespace);
        this.written.set(key, { created: true });
      }
    } catch (err) {
      if (!current && isNamespaceTerminating(err)) return;
      const message = errorMessage(err);
      if (current) recorder.event(desired, 'Warning', EVENT_REASON.FAILED_TO_UPDATE, `Failed to update endpoint ${key}: ${message}`);
      else recorder.event(desired, 'Warning', EVENT_REASON.FAILED_TO_CREATE, `Failed to create endpoint for service ${key}: ${message}`);
      throw err;
    }
  }

  private async deleteEndpoints(endpoints: Endpoints): Promise<void> {
    try {
      await this.ctx.client.delete(RESOURCES.endpoints, endpoints.metadata.name!, endpoints.metadata.namespace, {
        preconditions: { uid: endpoints.metadata.uid },
      });
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
    }
  }

  /** The cache does not show this controller's last write for `key` yet. */
  private cacheBehind(key: string, current: Endpoints | undefined): boolean {
    const written = this.written.get(key);
    if (!written) return false;
    const behind = 'created' in written ? !current : current?.metadata.resourceVersion === written.replaced;
    if (!behind) this.written.delete(key);
    return behind;
  }

  private podChanged(oldPod: Pod | undefined, pod: Pod): void {
    const services = this.services.list(pod.metadata.namespace).filter(isSelectingService);
    for (const service of servicesForPodEvent(services, oldPod, pod)) this.queue.add(objectKey(service));
  }
}

function isLeaderLock(endpoints: Endpoints): boolean {
  return endpoints.metadata.annotations?.[ANNOTATION.LEADER] !== undefined;
}
