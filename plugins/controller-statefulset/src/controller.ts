import { labelSelectorFromObject, RESOURCES, type ControllerRevision, type PersistentVolumeClaim, type Pod, type StatefulSet } from '@skiff/api';
import { objectKey, WorkQueue } from '@skiff/client';
import {
  byControllerUid,
  claimCandidates,
  CONTROLLER_UID_INDEX,
  controllerRefOf,
  ControllerRefManager,
  newControllerRef,
  ORPHAN_NAMESPACE_INDEX,
  orphansByNamespace,
  resolveControllerRef,
  runWhenSynced,
} from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { isMemberOf } from './identity.js';
import { CONTROLLER_NAME } from './names.js';
import { isRunningAndReady } from './pod-state.js';
import { StatefulPodControl } from './pod-control.js';
import { syncStatefulSet } from './sync.js';

/**
 * Runs StatefulSets: pods with stable names and claims, created in order and removed in reverse, rolled
 * to new templates through ControllerRevisions, with what it sees reported in each set's status.
 */
export class StatefulSetController {
  private readonly queue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly sets: Informer<StatefulSet>;
  private readonly pods: Informer<Pod>;
  private readonly revisions: Informer<ControllerRevision>;
  private readonly claims: Informer<PersistentVolumeClaim>;
  private readonly podControl: StatefulPodControl;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly now: () => number = Date.now,
  ) {
    this.sets = ctx.informers.informer<StatefulSet>(RESOURCES.statefulsets);
    this.pods = ctx.informers.informer<Pod>(RESOURCES.pods);
    this.revisions = ctx.informers.informer<ControllerRevision>(RESOURCES.controllerrevisions);
    this.claims = ctx.informers.informer<PersistentVolumeClaim>(RESOURCES.persistentvolumeclaims);
    for (const informer of [this.pods, this.revisions]) {
      informer.addIndex(CONTROLLER_UID_INDEX, byControllerUid);
      informer.addIndex(ORPHAN_NAMESPACE_INDEX, orphansByNamespace);
    }
    this.podControl = new StatefulPodControl(ctx.client, ctx.recorder, (namespace, name) => this.claims.get(`${namespace}/${name}`));
    this.sets.addHandlers({
      add: (set) => this.queue.add(objectKey(set)),
      update: (_old, set) => this.queue.add(objectKey(set)),
      delete: (set) => this.queue.add(objectKey(set)),
    });
    this.pods.addHandlers({
      add: (pod) => this.podAdded(pod),
      update: (oldPod, pod) => this.podUpdated(oldPod, pod),
      delete: (pod) => this.podDeleted(pod),
    });
    // A pod waiting for the claims of its predecessor to go is woken when they have.
    this.claims.addHandlers({ delete: (claim) => this.claimDeleted(claim) });
  }

  /** Waits for the caches, then processes StatefulSets until the context's signal aborts. */
  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, {
      informers: [this.sets, this.pods, this.revisions, this.claims],
      queue: this.queue,
      workers,
      sync: (key) => this.sync(key),
    });
  }

  async sync(key: string): Promise<void> {
    const set = this.sets.get(key);
    if (!set) return;
    const revisions = await this.claimRevisions(set);
    const pods = await this.claimPods(set);
    const { status } = await syncStatefulSet(
      {
        client: this.ctx.client,
        logger: this.ctx.logger,
        podControl: this.podControl,
        claims: (namespace, name) => this.claims.get(`${namespace}/${name}`),
        now: this.now,
      },
      set,
      pods,
      revisions,
      newControllerRef(set, RESOURCES.statefulsets),
    );
    // Pods become available minReadySeconds after turning ready; nothing else would wake the set then.
    const minReadySeconds = set.spec.minReadySeconds ?? 0;
    if (minReadySeconds > 0 && (status.readyReplicas ?? 0) !== (status.availableReplicas ?? 0)) this.queue.addAfter(key, minReadySeconds * 1000);
  }

  /** The set's pods: ones it controls or adopts whose labels match its selector and whose names make them members. */
  private claimPods(set: StatefulSet): Promise<Pod[]> {
    const selector = labelSelectorFromObject(set.spec.selector);
    return new ControllerRefManager<Pod>({
      client: this.ctx.client,
      controller: set,
      controllerType: RESOURCES.statefulsets,
      type: RESOURCES.pods,
      matches: (pod) => selector.matches(pod.metadata.labels ?? {}) && isMemberOf(set, pod),
    }).claim(claimCandidates(this.pods, set));
  }

  /** The set's revision history: revisions it controls, and orphans its selector matches, adopted. Never releases one. */
  private claimRevisions(set: StatefulSet): Promise<ControllerRevision[]> {
    const selector = labelSelectorFromObject(set.spec.selector);
    const candidates = claimCandidates(this.revisions, set).filter((revision) => selector.matches(revision.metadata.labels ?? {}));
    return new ControllerRefManager<ControllerRevision>({
      client: this.ctx.client,
      controller: set,
      controllerType: RESOURCES.statefulsets,
      type: RESOURCES.controllerrevisions,
      matches: () => true,
    }).claim(candidates);
  }

  private podAdded(pod: Pod): void {
    if (pod.metadata.deletionTimestamp) return this.podDeleted(pod);
    const ref = controllerRefOf(pod);
    if (ref) {
      const set = resolveControllerRef(this.sets, RESOURCES.statefulsets, pod.metadata.namespace, ref);
      if (set) this.queue.add(objectKey(set));
      return;
    }
    for (const set of this.setsSelecting(pod.metadata.namespace, pod.metadata.labels)) this.queue.add(objectKey(set));
  }

  private podUpdated(oldPod: Pod, pod: Pod): void {
    if (oldPod.metadata.resourceVersion === pod.metadata.resourceVersion) return;
    const oldRef = controllerRefOf(oldPod);
    const ref = controllerRefOf(pod);
    const refChanged = oldRef?.uid !== ref?.uid;
    if (oldRef && refChanged) {
      const previous = resolveControllerRef(this.sets, RESOURCES.statefulsets, oldPod.metadata.namespace, oldRef);
      if (previous) this.queue.add(objectKey(previous));
    }
    if (ref) {
      const set = resolveControllerRef(this.sets, RESOURCES.statefulsets, pod.metadata.namespace, ref);
      if (!set) return;
      this.queue.add(objectKey(set));
      const minReadySeconds = set.spec.minReadySeconds ?? 0;
      if (minReadySeconds > 0 && !isRunningAndReady(oldPod) && isRunningAndReady(pod)) this.queue.addAfter(objectKey(set), minReadySeconds * 1000 + 1000);
      return;
    }
    const labelsChanged = JSON.stringify(oldPod.metadata.labels ?? {}) !== JSON.stringify(pod.metadata.labels ?? {});
    if (labelsChanged || refChanged) for (const set of this.setsSelecting(pod.metadata.namespace, pod.metadata.labels)) this.queue.add(objectKey(set));
  }

  private podDeleted(pod: Pod): void {
    const ref = controllerRefOf(pod);
    if (!ref) return;
    const set = resolveControllerRef(this.sets, RESOURCES.statefulsets, pod.metadata.namespace, ref);
    if (set) this.queue.add(objectKey(set));
  }

  private claimDeleted(claim: PersistentVolumeClaim): void {
    for (const set of this.setsSelecting(claim.metadata.namespace, claim.metadata.labels)) this.queue.add(objectKey(set));
  }

  /** Sets in the namespace whose selector matches the labels: candidates to adopt an orphan. */
  private setsSelecting(namespace: string | undefined, labels: Record<string, string> | undefined): StatefulSet[] {
    return this.sets.list(namespace).filter((set) => {
      const selector = labelSelectorFromObject(set.spec.selector);
      return !selector.empty && selector.matches(labels ?? {});
    });
  }
}
