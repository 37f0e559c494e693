import { isApiError, RESOURCES, type KubeObject, type Pod, type ResourceQuota, type ResourceType } from '@skiff/api';
import { WorkQueue } from '@skiff/client';
import { runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { amountsOf, collectionsOfKey, podCounts, toList, usedByStoredObjects, type Collection } from '@skiff/plugin-admission-resource-quota';
import { CONTROLLER_NAME } from './names.js';

/**
 * Collections watched from the start, so a delete (or a pod finishing) gives its share back at once. Any other
 * built-in collection a quota counts (`count/replicasets.apps`) is watched from the first time one does; others
 * (custom resources) wait for the resync.
 */
const WATCHED = [
  RESOURCES.pods,
  RESOURCES.services,
  RESOURCES.persistentvolumeclaims,
  RESOURCES.configmaps,
  RESOURCES.secrets,
  RESOURCES.replicationcontrollers,
] as const;

export interface ResourceQuotaControllerOptions {
  /** How often every quota is counted again in full, whatever happened. */
  resyncIntervalMs: number;
}

/**
 * kube-controller-manager's ResourceQuota controller: keeps every quota's status.hard equal to its spec and
 * status.used equal to what the namespace's objects use — counted afresh when the quota is created or changed,
 * when a tracked object is created or deleted or a pod finishes, and every `resyncIntervalMs`.
 */
export class ResourceQuotaController {
  private readonly queue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly quotas: Informer<ResourceQuota>;
  private readonly watched = new Map<string, Informer>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly options: ResourceQuotaControllerOptions,
  ) {
    this.quotas = ctx.informers.informer<ResourceQuota>(RESOURCES.resourcequotas);
    this.quotas.addHandlers({
      add: (quota) => this.queue.add(keyOf(quota)),
      update: (before, after) => {
        if (JSON.stringify(before.spec) !== JSON.stringify(after.spec) || !statusMatches(after, amountsOf(after.status?.used))) this.queue.add(keyOf(after));
      },
    });
    for (const type of WATCHED) this.watch(type);
  }

  private watch(type: ResourceType): void {
    const informer = this.ctx.informers.informer(type);
    this.watched.set(collectionKey(type), informer);
    const touched = (object: KubeObject) => this.enqueueNamespace(object.metadata.namespace);
    informer.addHandlers({
      add: touched,
      delete: touched,
      update: (before, after) => {
        if (usageMayHaveChanged(type, before, after)) touched(after);
      },
    });
  }

  /** Starts watching the built-in collections this quota counts that nothing watches yet. */
  private watchCounted(quota: ResourceQuota): void {
    for (const key of Object.keys(quota.spec?.hard ?? {})) {
      for (const collection of collectionsOfKey(key)) {
        if (this.watched.has(`${collection.group}/${collection.resource}`)) continue;
        const type = builtinType(collection);
        if (type && type.namespaced) this.watch(type);
      }
    }
  }

  run(workers: number): Promise<void> {
    const timer = setInterval(() => {
      for (const quota of this.quotas.list()) this.queue.add(keyOf(quota));
    }, this.options.resyncIntervalMs);
    timer.unref();
    this.ctx.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
    return runWhenSynced(this.ctx, {
      informers: [this.quotas, ...this.watched.values()],
      queue: this.queue,
      workers,
      sync: (key) => this.sync(key),
      beforeWorkers: () => {
        for (const quota of this.quotas.list()) this.queue.add(keyOf(quota));
      },
    });
  }

  private enqueueNamespace(namespace: string | undefined): void {
    if (!namespace) return;
    for (const quota of this.quotas.list(namespace)) this.queue.add(keyOf(quota));
  }

  /** Counts one quota's usage and writes its status when it changed. */
  async sync(key: string): Promise<void> {
    const cached = this.quotas.get(key);
    if (!cached) return;
    this.watchCounted(cached);
    const { used } = await usedByStoredObjects(cached, (collection, namespace) => this.objects(collection, namespace));
    if (statusMatches(cached, used)) return;
    try {
      // The cache may lag behind the quota's charges: write on the quota as it is now.
      const quota = await this.ctx.client.get<ResourceQuota>(RESOURCES.resourcequotas, cached.metadata.name!, cached.metadata.namespace);
      if (statusMatches(quota, used)) return;
      const hard = quota.spec?.hard ?? {};
      await this.ctx.client.updateStatus<ResourceQuota>(RESOURCES.resourcequotas, {
        ...{},
        ...quota,
        status: { hard: { ...hard }, used: toList(used, Object.keys(hard)) },
      });
    } catch (err) {
      // Gone meanwhile: nothing to count. A conflict (a charge landed meanwhile) is retried with backoff by the workers.
      if (isApiError(err, 'NotFound')) return;
      throw err;
    }
  }

  private async objects(collection: Collection, namespace: string): Promise<KubeObject[]> {
    const informer = this.watched.get(`${collection.group}/${collection.resource}`);
    // A watch started moments ago may not hold everything yet: until it has, the API answers.
    if (informer?.hasSynced()) return informer.list(namespace);
    try {
      // A resource outside the built-in kinds (a CRD) is listed at v1.
      const type: ResourceType = builtinType(collection) ?? {
        group: collection.group,
        version: 'v1',
        resource: collection.resource,
        kind: '',
        namespaced: true,
      };
      return (await this.ctx.client.list(type, namespace)).items;
    } catch (err) {
      // A count of a resource the cluster does not serve (a CRD not installed yet) is zero.
      if (isApiError(err, 'NotFound')) return [];
      throw err;
    }
  }
}

function builtinType(collection: Collection): ResourceType | undefined {
  return Object.values(RESOURCES as Record<string, ResourceType>).find((type) => type.group === collection.group && type.resource === collection.resource);
}

function keyOf(quota: ResourceQuota): string {
  return `${quota.metadata.namespace}/${quota.metadata.name}`;
}

function collectionKey(type: ResourceType): string {
  return `${type.group}/${type.resource}`;
}

/** Whether status.hard equals the spec and status.used equals `used`, amount for amount. */
function statusMatches(quota: ResourceQuota, used: Map<string, number>): boolean {
  const spec = amountsOf(quota.spec?.hard);
  const hard = amountsOf(quota.status?.hard);
  const stored = amountsOf(quota.status?.used);
  if (spec.size !== hard.size || stored.size !== spec.size) return false;
  for (const [key, value] of spec) if (hard.get(key) !== value || stored.get(key) !== (used.get(key) ?? 0)) return false;
  return true;
}

function usageMayHaveChanged(type: ResourceType, before: KubeObject, after: KubeObject): boolean {
  if (type.resource === 'pods') {
    return podCounts(before as Pod) !== podCounts(after as Pod) || JSON.stringify((before as Pod).spec) !== JSON.stringify((after as Pod).spec);
  }
  if (type.resource === 'services' || type.resource === 'persistentvolumeclaims')
    return JSON.stringify(before.spec) !== JSON.stringify(after.spec) || type.resource === 'persistentvolumeclaims';
  return false;
}
