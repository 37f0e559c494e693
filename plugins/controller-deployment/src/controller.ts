import { isApiError, labelSelectorFromObject, RESOURCES, type Deployment, type Pod, type ReplicaSet } from '@skiff/api';
import { objectKey, WorkQueue } from '@skiff/client';
import {
  byControllerUid,
  claimCandidates,
  CONTROLLER_UID_INDEX,
  controllerRefOf,
  ControllerRefManager,
  ORPHAN_NAMESPACE_INDEX,
  orphansByNamespace,
  resolveControllerRef,
  runWhenSynced,
} from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { CONTROLLER_NAME, EVENT_REASON } from './names.js';
import { isRecreate, isSelectorEmpty } from './spec.js';
import { DeploymentSync } from './sync.js';

/**
 * Rolls Deployments out as ReplicaSets: one per pod template, scaled up and down according to the
 * strategy, with the rollout's progress reported in the Deployment's status.
 */
export class DeploymentController {
  private readonly queue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly deployments: Informer<Deployment>;
  private readonly replicaSets: Informer<ReplicaSet>;
  private readonly pods: Informer<Pod>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly now: () => number = Date.now,
  ) {
    this.deployments = ctx.informers.informer<Deployment>(RESOURCES.deployments);
    this.replicaSets = ctx.informers.informer<ReplicaSet>(RESOURCES.replicasets);
    this.pods = ctx.informers.informer<Pod>(RESOURCES.pods);
    this.replicaSets.addIndex(CONTROLLER_UID_INDEX, byControllerUid);
    this.replicaSets.addIndex(ORPHAN_NAMESPACE_INDEX, orphansByNamespace);
    this.pods.addIndex(CONTROLLER_UID_INDEX, byControllerUid);
    this.deployments.addHandlers({
      add: (d) => this.queue.add(objectKey(d)),
      update: (_old, d) => this.queue.add(objectKey(d)),
      delete: (d) => this.queue.add(objectKey(d)),
    });
    this.replicaSets.addHandlers({
      add: (rs) => this.replicaSetAdded(rs),
      update: (oldRS, rs) => this.replicaSetUpdated(oldRS, rs),
      delete: (rs) => this.enqueueController(rs),
    });
    this.pods.addHandlers({ delete: (pod) => this.podDeleted(pod) });
  }

  /** Waits for the caches, then processes Deployments until the context's signal aborts. */
  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, { informers: [this.deployments, this.replicaSets, this.pods], queue: this.queue, workers, sync: (key) => this.sync(key) });
  }

  async sync(key: string): Promise<void> {
    const cached = this.deployments.get(key);
    if (!cached) return;
    if (isSelectorEmpty(cached)) return this.rejectEmptySelector(cached);
    const owned = await this.claimReplicaSets(cached);
    const sync = new DeploymentSync(
      {
        client: this.ctx.client,
        recorder: this.ctx.recorder,
        podsOf: (rs) => this.pods.byIndex(CONTROLLER_UID_INDEX, rs.metadata.uid!),
        requeueAfter: (ms) => this.queue.addAfter(key, ms),
        now: this.now,
      },
      cached,
      owned,
    );
    try {
      await sync.run();
    } catch (err) {
      // Deleted while we worked on it (a finalizer was just removed): there is nothing left to do.
      if (isApiError(err, 'NotFound') && err.details?.kind === RESOURCES.deployments.resource && err.details.name === cached.metadata.name) return;
      throw err;
    }
  }

  /** An empty selector would select every pod in the namespace; Kubernetes refuses to act on it. */
  private async rejectEmptySelector(d: Deployment): Promise<void> {
    this.ctx.recorder.event(d, 'Warning', EVENT_REASON.SELECTING_ALL, 'This deployment is selecting all pods. A non-empty selector is required.');
    const generation = d.metadata.generation ?? 0;
    if ((d.status?.observedGeneration ?? 0) >= generation) return;
    await this.ctx.client.updateStatus<Deployment>(RESOURCES.deployments, {
      ...{},
      ...structuredClone(d),
      status: { ...{}, ...d.status, observedGeneration: generation },
    });
  }

  private claimReplicaSets(d: Deployment): Promise<ReplicaSet[]> {
    const selector = labelSelectorFromObject(d.spec.selector);
    return new ControllerRefManager<ReplicaSet>({
      client: this.ctx.client,
      controller: d,
      controllerType: RESOURCES.deployments,
      type: RESOURCES.replicasets,
      matches: (rs) => selector.matches(rs.metadata.labels ?? {}),
    }).claim(claimCandidates(this.replicaSets, d));
  }

  private replicaSetAdded(rs: ReplicaSet): void {
    if (controllerRefOf(rs)) return this.enqueueController(rs);
    for (const d of this.deploymentsSelecting(rs)) this.queue.add(objectKey(d));
  }

  private replicaSetUpdated(oldRS: ReplicaSet, rs: ReplicaSet): void {
    if (oldRS.metadata.resourceVersion === rs.metadata.resourceVersion) return;
    const oldRef = controllerRefOf(oldRS);
    const ref = controllerRefOf(rs);
    const refChanged = oldRef?.uid !== ref?.uid;
    if (oldRef && refChanged) this.enqueueController(oldRS);
    if (ref) return this.enqueueController(rs);
    const labelsChanged = JSON.stringify(oldRS.metadata.labels ?? {}) !== JSON.stringify(rs.metadata.labels ?? {});
    if (labelsChanged || refChanged) for (const d of this.deploymentsSelecting(rs)) this.queue.add(objectKey(d));
  }

  /** A Recreate rollout waits for the old pods to be gone; their deletions are what it waits for. */
  private podDeleted(pod: Pod): void {
    const rsRef = controllerRefOf(pod);
    if (!rsRef || rsRef.kind !== RESOURCES.replicasets.kind) return;
    const rs = this.replicaSets.get(`${pod.metadata.namespace}/${rsRef.name}`);
    if (!rs || rs.metadata.uid !== rsRef.uid) return;
    const d = resolveControllerRef(this.deployments, RESOURCES.deployments, rs.metadata.namespace, controllerRefOf(rs));
    if (d && isRecreate(d)) this.queue.add(objectKey(d));
  }

  private enqueueController(rs: ReplicaSet): void {
    const d = resolveControllerRef(this.deployments, RESOURCES.deployments, rs.metadata.namespace, controllerRefOf(rs));
    if (d) this.queue.add(objectKey(d));
  }

  /** Deployments in the ReplicaSet's namespace whose selector matches it: candidates to adopt an orphan. */
  private deploymentsSelecting(rs: ReplicaSet): Deployment[] {
    return this.deployments
      .list(rs.metadata.namespace)
      .filter((d) => !isSelectorEmpty(d) && labelSelectorFromObject(d.spec.selector).matches(rs.metadata.labels ?? {}));
  }
}
