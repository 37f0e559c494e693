import { errorMessage, isApiError, isPodReady, labelSelectorFromObject, RESOURCES, type OwnerReference, type Pod, type ReplicaSet } from '@skiff/api';
import { objectKey, WorkQueue } from '@skiff/client';
import {
  byControllerUid,
  claimCandidates,
  CONTROLLER_UID_INDEX,
  ControllerRefManager,
  Expectations,
  isPodActive,
  newControllerRef,
  ORPHAN_NAMESPACE_INDEX,
  orphansByNamespace,
  ownedPodEventHandlers,
  runWhenSynced,
  slowStartBatch,
} from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { type ReplicatedKind, type ReplicatedObject } from './kinds.js';
import { EVENT_REASON } from './names.js';
import { podsToDelete } from './pod-ranking.js';
import { podFromTemplate } from './pod-template.js';
import { calculateStatus, statusChanged, type ManageFailure } from './status.js';

/** The most pods one sync of a ReplicaSet creates or deletes, as in kube-controller-manager. */
export const BURST_REPLICAS = 500;

interface FailedManage extends ManageFailure {
  cause: unknown;
}

/**
 * Keeps the number of pods of every ReplicaSet at `spec.replicas`: creates missing pods from the
 * template, deletes surplus ones (cheapest to lose first), adopts matching orphans, releases pods that
 * stopped matching, and reports what it sees in `status`. Given another replicated kind, it does the same
 * for that kind's objects, seen as ReplicaSets (the ReplicationController controller).
 */
export class ReplicaSetController<T extends ReplicatedObject = ReplicaSet> {
  private readonly queue: WorkQueue<string>;
  private readonly expectations: Expectations;
  private readonly replicaSets: Informer<T>;
  private readonly pods: Informer<Pod>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly kind: ReplicatedKind<T>,
    private readonly now: () => number = Date.now,
  ) {
    this.queue = new WorkQueue<string>({ name: kind.controllerName });
    this.expectations = new Expectations(now);
    this.replicaSets = ctx.informers.informer<T>(kind.resource);
    this.pods = ctx.informers.informer<Pod>(RESOURCES.pods);
    this.pods.addIndex(CONTROLLER_UID_INDEX, byControllerUid);
    this.pods.addIndex(ORPHAN_NAMESPACE_INDEX, orphansByNamespace);
    this.replicaSets.addHandlers({
      add: (rs) => this.queue.add(objectKey(rs)),
      update: (_old, rs) => this.queue.add(objectKey(rs)),
      delete: (rs) => {
        this.expectations.forget(objectKey(rs));
        this.queue.add(objectKey(rs));
      },
    });
    this.pods.addHandlers(
      ownedPodEventHandlers({
        queue: this.queue,
        expectations: this.expectations,
        resolveControllerRef: (namespace, ref) => this.controllerOf(namespace, ref),
        selecting: (pod) => this.replicaSetsSelecting(pod),
        isPodReady,
      }),
    );
  }

  /** Waits for the caches, then processes ReplicaSets until the context's signal aborts. */
  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, { informers: [this.replicaSets, this.pods], queue: this.queue, workers, sync: (key) => this.sync(key) });
  }

  /** Brings one ReplicaSet to its desired pod count and updates its status. */
  async sync(key: string): Promise<void> {
    const object = this.replicaSets.get(key);
    if (!object) {
      this.expectations.forget(key);
      return;
    }
    const rs = this.kind.asReplicaSet(object);
    const trustCache = this.expectations.satisfied(key) && !rs.metadata.deletionTimestamp;
    const pods = await this.claimPods(rs);
    const failure = trustCache ? await this.manageReplicas(rs, pods) : undefined;
    const status = calculateStatus(rs, pods, failure, this.now());
    await this.writeStatus(object, status);
    if (failure) throw failure.cause;

    // Pods become available only minReadySeconds after turning ready; nothing else would wake us then.
    const minReadySeconds = rs.spec.minReadySeconds ?? 0;
    const desired = rs.spec.replicas ?? 1;
    if (minReadySeconds > 0 && (status.readyReplicas ?? 0) === desired && (status.availableReplicas ?? 0) !== desired)
      this.queue.addAfter(key, minReadySeconds * 1000);
  }

  private claimPods(rs: ReplicaSet): Promise<Pod[]> {
    const selector = labelSelectorFromObject(rs.spec.selector);
    const candidates = claimCandidates(this.pods, rs).filter(isPodActive);
    return new ControllerRefManager<Pod>({
      client: this.ctx.client,
      controller: rs,
      controllerType: this.kind.resource,
      type: RESOURCES.pods,
      matches: (pod) => selector.matches(pod.metadata.labels ?? {}),
    }).claim(candidates);
  }

  private async manageReplicas(rs: ReplicaSet, pods: readonly Pod[]): Promise<FailedManage | undefined> {
    const key = objectKey(rs);
    const diff = pods.length - (rs.spec.replicas ?? 1);
    if (diff < 0) {
      const count = Math.min(-diff, BURST_REPLICAS);
      // Expect every creation before the first request: its watch event may arrive before the response.
      this.expectations.expectCreations(key, count);
      const controllerRef = newControllerRef(rs, this.kind.resource);
      const result = await slowStartBatch(count, 1, () => this.createPod(rs, controllerRef));
      for (let skipped = count - result.successes; skipped > 0; skipped -= 1) this.expectations.creationObserved(key);
      if (result.error) return { reason: 'FailedCreate', message: errorMessage(result.error), cause: result.error };
    } else if (diff > 0) {
      const victims = podsToDelete(pods, Math.min(diff, BURST_REPLICAS));
      this.expectations.expectDeletions(key, victims.map(objectKey));
      const results = await Promise.allSettled(victims.map((pod) => this.deletePod(rs, pod)));
      const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
      if (failed) return { reason: 'FailedDelete', message: errorMessage(failed.reason), cause: failed.reason };
    }
    return undefined;
  }

  private async createPod(rs: ReplicaSet, controllerRef: OwnerReference): Promise<void> {
    try {
      const pod = await this.ctx.client.create<Pod>(RESOURCES.pods, podFromTemplate(rs, controllerRef), rs.metadata.namespace);
      this.ctx.recorder.event(rs, 'Normal', EVENT_REASON.CREATED, `Created pod: ${pod.metadata.name}`);
    } catch (err) {
      this.ctx.recorder.event(rs, 'Warning', EVENT_REASON.CREATE_FAILED, `Error creating: ${errorMessage(err)}`);
      throw err;
    }
  }

  private async deletePod(rs: ReplicaSet, pod: Pod): Promise<void> {
    try {
      await this.ctx.client.delete(RESOURCES.pods, pod.metadata.name!, pod.metadata.namespace);
      this.ctx.recorder.event(rs, 'Normal', EVENT_REASON.DELETED, `Deleted pod: ${pod.metadata.name}`);
    } catch (err) {
      // The deletion will not be observed now; without this the ReplicaSet would wait out the timeout.
      this.expectations.deletionObserved(objectKey(rs), objectKey(pod));
      if (isApiError(err, 'NotFound')) return;
      this.ctx.recorder.event(rs, 'Warning', EVENT_REASON.DELETE_FAILED, `Error deleting: ${errorMessage(err)}`);
      throw err;
    }
  }

  /**
   * Writes the status if it changed; on a conflict, retries once against the current object. An
   * object deleted meanwhile has nobody left to report to.
   */
  private async writeStatus(object: T, status: ReplicaSet['status']): Promise<void> {
    if (!statusChanged(object, status!)) return;
    const { client } = this.ctx;
    const { resource } = this.kind;
    try {
      await client.updateStatus<T>(resource, { ...{}, ...structuredClone(object), status });
    } catch (err) {
      if (isApiError(err, 'NotFound')) return;
      if (!isApiError(err, 'Conflict')) throw err;
      const fresh = await client.get<T>(resource, object.metadata.name!, object.metadata.namespace);
      if (fresh.metadata.uid !== object.metadata.uid) return;
      await client.updateStatus<T>(resource, { ...{}, ...fresh, status });
    }
  }

  /**
   * The cached owner a pod's controller reference names, if it is still the same object. Only the kind
   * is compared, not the group, as kube-controller-manager does.
   */
  private controllerOf(namespace: string | undefined, ref: OwnerReference): ReplicaSet | undefined {
    if (ref.kind !== this.kind.resource.kind) return undefined;
    const owner = this.replicaSets.get(`${namespace}/${ref.name}`);
    return owner?.metadata.uid === ref.uid ? this.kind.asReplicaSet(owner) : undefined;
  }

  /** Owners in the pod's namespace whose selector matches it: candidates to adopt an orphan. */
  private replicaSetsSelecting(pod: Pod): ReplicaSet[] {
    return this.replicaSets
      .list(pod.metadata.namespace)
      .map((object) => this.kind.asReplicaSet(object))
      .filter((rs) => {
        const selector = labelSelectorFromObject(rs.spec.selector);
        return !selector.empty && selector.matches(pod.metadata.labels);
      });
  }
}
