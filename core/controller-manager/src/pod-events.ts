import { canonicalJson } from './canonical-json.js';
import type { KubeObject, OwnerReference, Pod } from '@skiff/api';
import { objectKey, type WorkQueue } from '@skiff/client';
import type { Expectations } from './expectations.js';
import { controllerRefOf } from './owner-references.js';

/** An owner of pods that may wait `minReadySeconds` before counting a ready pod as available. */
export type PodOwner = KubeObject & { spec: { minReadySeconds?: number } };

export interface OwnedPodEventsOptions<T extends PodOwner> {
  /** The owners' work queue, keyed by `namespace/name`. */
  queue: WorkQueue<string>;
  /** Told of every owned pod that appears and every deletion that is seen. */
  expectations: Expectations;
  /** The cached owner a controller reference points to, if it is still the same object (same uid). */
  resolveControllerRef(namespace: string | undefined, ref: OwnerReference): T | undefined;
  /** Owners in the pod's namespace whose selector matches it: candidates to adopt an orphan. */
  selecting(pod: Pod): T[];
  isPodReady(pod: Pod): boolean;
}

export interface PodEventHandlers {
  add(pod: Pod): void;
  update(oldPod: Pod, pod: Pod): void;
  delete(pod: Pod): void;
}

/**
 * Pod informer handlers for a controller that creates and deletes pods through expectations (ReplicaSet,
 * DaemonSet): each event wakes the owner the pod names as its controller — or, for an orphan, every owner
 * that could adopt it — and tells the expectations what was seen. A pod that starts terminating counts as
 * deleted at once, so its replacement need not wait for the kubelet; an owner with `minReadySeconds` is
 * woken again once a pod that just turned ready becomes available.
 */
export function ownedPodEventHandlers<T extends PodOwner>(options: OwnedPodEventsOptions<T>): PodEventHandlers {
  const { queue, expectations, resolveControllerRef, selecting, isPodReady } = options;

  const deleted = (pod: Pod): void => {
    const ref = controllerRefOf(pod);
    if (!ref) return;
    const owner = resolveControllerRef(pod.metadata.namespace, ref);
    if (!owner) return;
    expectations.deletionObserved(objectKey(owner), objectKey(pod));
    queue.add(objectKey(owner));
  };

  const added = (pod: Pod): void => {
    // A pod that is already terminating when first seen may be a deletion that is awaited.
    if (pod.metadata.deletionTimestamp) return deleted(pod);
    const ref = controllerRefOf(pod);
    if (ref) {
      const owner = resolveControllerRef(pod.metadata.namespace, ref);
      if (!owner) return;
      expectations.creationObserved(objectKey(owner));
      queue.add(objectKey(owner));
      return;
    }
    for (const owner of selecting(pod)) queue.add(objectKey(owner));
  };

  const updated = (oldPod: Pod, pod: Pod): void => {
    if (oldPod.metadata.resourceVersion === pod.metadata.resourceVersion) return;
    const labelsChanged = canonicalJson(oldPod.metadata.labels ?? {}) !== canonicalJson(pod.metadata.labels ?? {});
    if (pod.metadata.deletionTimestamp) {
      deleted(pod);
      if (labelsChanged) deleted(oldPod);
      return;
    }
    const oldRef = controllerRefOf(oldPod);
    const ref = controllerRefOf(pod);
    const refChanged = oldRef?.uid !== ref?.uid;
    if (oldRef && refChanged) {
      const previous = resolveControllerRef(oldPod.metadata.namespace, oldRef);
      if (previous) queue.add(objectKey(previous));
    }
    if (ref) {
      const owner = resolveControllerRef(pod.metadata.namespace, ref);
      if (!owner) return;
      queue.add(objectKey(owner));
      const minReadySeconds = owner.spec.minReadySeconds ?? 0;
      // A second past the boundary, so the pass that runs sees the pod available.
      if (minReadySeconds > 0 && !isPodReady(oldPod) && isPodReady(pod)) queue.addAfter(objectKey(owner), minReadySeconds * 1000 + 1000);
      return;
    }
    if (labelsChanged || refChanged) for (const owner of selecting(pod)) queue.add(objectKey(owner));
  };

  return { add: added, update: updated, delete: deleted };
}
