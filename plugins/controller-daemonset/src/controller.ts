import {
  errorMessage,
  isApiError,
  isPodReady,
  labelSelectorFromObject,
  RESOURCES,
  type ControllerRevision,
  type DaemonSet,
  type Node,
  type OwnerReference,
  type Pod,
} from '@skiff/api';
import { objectKey, WorkQueue } from '@skiff/client';
import {
  byControllerUid,
  claimCandidates,
  CONTROLLER_UID_INDEX,
  controllerRefOf,
  ControllerRefManager,
  Expectations,
  newControllerRef,
  ORPHAN_NAMESPACE_INDEX,
  orphansByNamespace,
  ownedPodEventHandlers,
  resolveControllerRef,
  runWhenSynced,
  slowStartBatch,
} from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { Backoff } from './backoff.js';
import { nodeShouldRunDaemonPod } from './eligibility.js';
import { DaemonSetError } from './errors.js';
import { RevisionHistory } from './history-store.js';
import { planDaemonPods, podsByNode } from './manage.js';
import { BURST_REPLICAS, CONTROLLER_NAME, CONTROLLER_REVISION_HASH_LABEL, EVENT_REASON } from './names.js';
import { podForNode, templateGeneration } from './pod-template.js';
import { isRollingUpdate, planRollingUpdate } from './rolling.js';
import { calculateStatus, statusChanged } from './status.js';

/**
 * Runs one pod of every DaemonSet on each node that should have it: creates pods for new or newly
 * matching nodes (placed there by required node affinity, bound by the scheduler), deletes pods from
 * nodes that stop matching or disappear, replaces failed ones with backoff, rolls template changes out
 * (RollingUpdate with maxUnavailable / maxSurge, or OnDelete), keeps ControllerRevisions as history and
 * reports what it sees in `status`.
 */
export class DaemonSetController {
  private readonly queue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly expectations: Expectations;
  private readonly failedPodsBackoff: Backoff;
  private readonly daemonSets: Informer<DaemonSet>;
  private readonly revisions: Informer<ControllerRevision>;
  private readonly pods: Informer<Pod>;
  private readonly nodes: Informer<Node>;
  private readonly history: RevisionHistory;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly now: () => number = Date.now,
  ) {
    this.expectations = new Expectations(now);
    this.failedPodsBackoff = new Backoff(now);
    this.daemonSets = ctx.informers.informer<DaemonSet>(RESOURCES.daemonsets);
    this.revisions = ctx.informers.informer<ControllerRevision>(RESOURCES.controllerrevisions);
    this.pods = ctx.informers.informer<Pod>(RESOURCES.pods);
    this.nodes = ctx.informers.informer<Node>(RESOURCES.nodes);
    this.pods.addIndex(CONTROLLER_UID_INDEX, byControllerUid);
    this.pods.addIndex(ORPHAN_NAMESPACE_INDEX, orphansByNamespace);
    this.revisions.addIndex(CONTROLLER_UID_INDEX, byControllerUid);
    this.revisions.addIndex(ORPHAN_NAMESPACE_INDEX, orphansByNamespace);
    this.history = new RevisionHistory(ctx.client, this.revisions);

    this.daemonSets.addHandlers({
      add: (ds) => this.queue.add(objectKey(ds)),
      update: (_old, ds) => this.queue.add(objectKey(ds)),
      delete: (ds) => {
        this.expectations.forget(objectKey(ds));
        this.queue.add(objectKey(ds));
      },
    });
    this.revisions.addHandlers({
      add: (revision) => this.ownedObjectChanged(revision),
      update: (oldRevision, revision) => {
        if (oldRevision.metadata.resourceVersion === revision.metadata.resourceVersion) return;
        const oldRef = controllerRefOf(oldRevision);
        if (oldRef && oldRef.uid !== controllerRefOf(revision)?.uid) this.ownedObjectChanged(oldRevision);
        this.ownedObjectChanged(revision);
      },
      delete: (revision) => this.ownedObjectChanged(revision),
    });
    this.pods.addHandlers(
      ownedPodEventHandlers({
        queue: this.queue,
        expectations: this.expectations,
        resolveControllerRef: (namespace, ref) => resolveControllerRef(this.daemonSets, RESOURCES.daemonsets, namespace, ref),
        selecting: (pod) => this.daemonSetsSelecting(pod),
        isPodReady,
      }),
    );
    this.nodes.addHandlers({
      add: (node) => this.nodeAdded(node),
      update: (oldNode, node) => this.nodeUpdated(oldNode, node),
      delete: () => this.enqueueAll(),
    });
  }

  /** Waits for the caches, then processes DaemonSets until the context's signal aborts. */
  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, {
      informers: [this.daemonSets, this.revisions, this.pods, this.nodes],
      queue: this.queue,
      workers,
      sync: (key) => this.sync(key),
    });
  }

  /** Brings one DaemonSet to one pod per eligible node, rolls it forward, and updates its status. */
  async sync(key: string): Promise<void> {
    const ds = this.daemonSets.get(key);
    if (!ds) {
      this.expectations.forget(key);
      return;
    }
    if (labelSelectorFromObject(ds.spec.selector).empty) {
      this.ctx.recorder.event(ds, 'Warning', EVENT_REASON.SELECTING_ALL, 'This daemon set is selecting all pods. A non-empty selector is required.');
      return;
    }
    // Being deleted: the garbage collector removes its pods; creating more would only race it.
    if (ds.metadata.deletionTimestamp) return;
    const nodes = this.nodes.list();
    const { current, old } = await this.history.construct(ds);
    const hash = current.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? current.metadata.name!;

    if (!this.expectations.satisfied(key)) {
      await this.updateStatus(ds, nodes, hash, false);
      return;
    }
    let failure: unknown;
    try {
      await this.updateDaemonSet(ds, nodes, hash, old);
    } catch (err) {
      failure = err;
    }
    await this.updateStatus(ds, nodes, hash, true);
    if (failure) throw failure;
  }

  private async updateDaemonSet(ds: DaemonSet, nodes: readonly Node[], hash: string, old: readonly ControllerRevision[]): Promise<void> {
    const key = objectKey(ds);
    const pods = await this.claimPods(ds);
    await this.manage(ds, nodes, pods, hash);
    if (this.expectations.satisfied(key) && isRollingUpdate(ds)) {
      const step = planRollingUpdate(ds, nodes, podsByNode(this.ownedPods(ds)), hash, this.now());
      await this.syncNodes(ds, step.podsToDelete, step.nodesToCreate, hash);
    }
    await this.history.cleanUp(ds, old, this.ownedPods(ds));
  }

  private async manage(ds: DaemonSet, nodes: readonly Node[], pods: readonly Pod[], hash: string): Promise<void> {
    const plan = planDaemonPods(ds, nodes, podsByNode(pods), hash, this.now());
    const podsToDelete = [...plan.podsToDelete];
    let failedDeleted = 0;
    for (const { nodeName, pod } of plan.failedPods) {
      const backoffKey = `${ds.metadata.uid}/${templateGeneration(ds) ?? 0}/${nodeName}`;
      const wait = this.failedPodsBackoff.remaining(backoffKey);
      if (wait > 0) {
        this.queue.addAfter(objectKey(ds), wait);
        continue;
      }
      this.failedPodsBackoff.next(backoffKey);
      this.ctx.recorder.event(
        ds,
        'Warning',
        EVENT_REASON.FAILED_DAEMON_POD,
        `Found failed daemon pod ${pod.metadata.namespace}/${pod.metadata.name} on node ${nodeName}, will try to kill it`,
      );
      podsToDelete.push(pod);
      failedDeleted += 1;
    }
    this.failedPodsBackoff.prune();
    await this.syncNodes(ds, podsToDelete, plan.nodesNeedingPods, hash);
    // Retry with the queue's backoff: the replacements come from a later pass once the deletions are seen.
    if (failedDeleted > 0) throw new DaemonSetError('SKIFF_ERR_DAEMONSET_FAILED_PODS', { count: failedDeleted, key: objectKey(ds) });
  }

  /** Deletes `podsToDelete` and creates a pod on each of `nodesNeedingPods`, at most BURST_REPLICAS of each per pass. */
  private async syncNodes(ds: DaemonSet, podsToDelete: readonly Pod[], nodesNeedingPods: readonly string[], hash: string): Promise<void> {
    if (podsToDelete.length === 0 && nodesNeedingPods.length === 0) return;
    const key = objectKey(ds);
    const creating = nodesNeedingPods.slice(0, BURST_REPLICAS);
    const deleting = podsToDelete.slice(0, BURST_REPLICAS);
    this.expectations.expect(key, creating.length, deleting.map(objectKey));
    const controllerRef = newControllerRef(ds, RESOURCES.daemonsets);

    const errors: unknown[] = [];
    let next = 0;
    const created = await slowStartBatch(creating.length, 1, () => this.createPod(ds, creating[next++]!, hash, controllerRef));
    for (let skipped = creating.length - created.successes; skipped > 0; skipped -= 1) this.expectations.creationObserved(key);
    if (created.error) errors.push(created.error);

    const deleted = await Promise.allSettled(deleting.map((pod) => this.deletePod(ds, pod)));
    for (const result of deleted) if (result.status === 'rejected') errors.push(result.reason);
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, errors.map((err) => errorMessage(err)).join('; '));
  }

  private async createPod(ds: DaemonSet, nodeName: string, hash: string, controllerRef: OwnerReference): Promise<void> {
    try {
      const pod = await this.ctx.client.create<Pod>(RESOURCES.pods, podForNode(ds, nodeName, hash, controllerRef), ds.metadata.namespace);
      this.ctx.recorder.event(ds, 'Normal', EVENT_REASON.CREATED, `Created pod: ${pod.metadata.name}`);
    } catch (err) {
      this.ctx.recorder.event(ds, 'Warning', EVENT_REASON.CREATE_FAILED, `Error creating: ${errorMessage(err)}`);
      throw err;
    }
  }

  private async deletePod(ds: DaemonSet, pod: Pod): Promise<void> {
    try {
      await this.ctx.client.delete(RESOURCES.pods, pod.metadata.name!, pod.metadata.namespace, { preconditions: { uid: pod.metadata.uid } });
      this.ctx.recorder.event(ds, 'Normal', EVENT_REASON.DELETED, `Deleted pod: ${pod.metadata.name}`);
    } catch (err) {
      // The deletion will not be observed now; without this the DaemonSet would wait out the timeout.
      this.expectations.deletionObserved(objectKey(ds), objectKey(pod));
      if (isApiError(err, 'NotFound')) return;
      this.ctx.recorder.event(ds, 'Warning', EVENT_REASON.DELETE_FAILED, `Error deleting: ${errorMessage(err)}`);
      throw err;
    }
  }

  private claimPods(ds: DaemonSet): Promise<Pod[]> {
    const selector = labelSelectorFromObject(ds.spec.selector);
    return new ControllerRefManager<Pod>({
      client: this.ctx.client,
      controller: ds,
      controllerType: RESOURCES.daemonsets,
      type: RESOURCES.pods,
      matches: (pod) => selector.matches(pod.metadata.labels ?? {}),
    }).claim(claimCandidates(this.pods, ds));
  }

  /** The DaemonSet's pods as the cache holds them now (after this pass's claims). */
  private ownedPods(ds: DaemonSet): Pod[] {
    return this.pods.byIndex(CONTROLLER_UID_INDEX, ds.metadata.uid!);
  }

  private async updateStatus(ds: DaemonSet, nodes: readonly Node[], hash: string, observed: boolean): Promise<void> {
    const status = calculateStatus(ds, nodes, podsByNode(this.ownedPods(ds), false), hash, this.now(), observed);
    if (statusChanged(ds, status)) {
      const { client } = this.ctx;
      try {
        await client.updateStatus<DaemonSet>(RESOURCES.daemonsets, { ...{}, ...structuredClone(ds), status });
      } catch (err) {
        if (isApiError(err, 'NotFound')) return;
        if (!isApiError(err, 'Conflict')) throw err;
        const fresh = await client.get<DaemonSet>(RESOURCES.daemonsets, ds.metadata.name!, ds.metadata.namespace);
        if (fresh.metadata.uid !== ds.metadata.uid) return;
        await client.updateStatus<DaemonSet>(RESOURCES.daemonsets, {
          ...{},
          ...fresh,
          status: { ...{}, ...status, collisionCount: fresh.status?.collisionCount },
        });
      }
    }
    // Pods turn available minReadySeconds after turning ready; nothing else would wake us then.
    const minReadySeconds = ds.spec.minReadySeconds ?? 0;
    if (minReadySeconds > 0 && status.numberReady !== (status.numberAvailable ?? 0)) this.queue.addAfter(objectKey(ds), minReadySeconds * 1000);
  }

  private ownedObjectChanged(revision: ControllerRevision): void {
    const ref = controllerRefOf(revision);
    if (ref) {
      const ds = resolveControllerRef(this.daemonSets, RESOURCES.daemonsets, revision.metadata.namespace, ref);
      if (ds) this.queue.add(objectKey(ds));
      return;
    }
    for (const ds of this.daemonSetsSelecting(revision)) this.queue.add(objectKey(ds));
  }

  private nodeAdded(node: Node): void {
    for (const ds of this.daemonSets.list()) if (nodeShouldRunDaemonPod(node, ds).shouldRun) this.queue.add(objectKey(ds));
  }

  /** Heartbeats rewrite node status all the time; only changes that can alter a verdict count. */
  private nodeUpdated(oldNode: Node, node: Node): void {
    if (!nodeSchedulingChanged(oldNode, node)) return;
    for (const ds of this.daemonSets.list()) {
      const before = nodeShouldRunDaemonPod(oldNode, ds);
      const after = nodeShouldRunDaemonPod(node, ds);
      if (before.shouldRun !== after.shouldRun || before.shouldContinueRunning !== after.shouldContinueRunning) this.queue.add(objectKey(ds));
    }
  }

  private enqueueAll(): void {
    for (const ds of this.daemonSets.list()) this.queue.add(objectKey(ds));
  }

  /** DaemonSets in the object's namespace whose selector matches it: candidates to adopt an orphan. */
  private daemonSetsSelecting(object: Pod | ControllerRevision): DaemonSet[] {
    return this.daemonSets.list(object.metadata.namespace).filter((ds) => {
      const selector = labelSelectorFromObject(ds.spec.selector);
      return !selector.empty && selector.matches(object.metadata.labels ?? {});
    });
  }
}

/** Whether a node changed in a way that can change where daemon pods belong: labels, taints, cordon, conditions. */
export function nodeSchedulingChanged(oldNode: Node, node: Node): boolean {
  const conditions = (n: Node) => (n.status?.conditions ?? []).map((condition) => `${condition.type}=${condition.status}`).join(',');
  return (
    JSON.stringify(oldNode.metadata.labels ?? {}) !== JSON.stringify(node.metadata.labels ?? {}) ||
    JSON.stringify(oldNode.spec?.taints ?? []) !== JSON.stringify(node.spec?.taints ?? []) ||
    Boolean(oldNode.spec?.unschedulable) !== Boolean(node.spec?.unschedulable) ||
    conditions(oldNode) !== conditions(node)
  );
}
