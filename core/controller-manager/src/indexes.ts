import type { KubeObject } from '@skiff/api';
import type { Informer } from '@skiff/kernel';
import { controllerRefOf } from './owner-references.js';

/**
 * Informer index names are shared by every controller using the same informer, so these are named
 * after what they file objects by and defined once, here.
 */
export const CONTROLLER_UID_INDEX = 'metadata.ownerReferences[controller].uid';
export const OWNER_UID_INDEX = 'metadata.ownerReferences.uid';
export const ORPHAN_NAMESPACE_INDEX = 'metadata.namespace[no controller]';

/** Files an object under the uid of its controller (the owner reference with `controller: true`). */
export function byControllerUid(object: KubeObject): string[] {
  const ref = controllerRefOf(object);
  return ref ? [ref.uid] : [];
}

/** Files an object under the uid of every owner it references. */
export function byOwnerUid(object: KubeObject): string[] {
  return (object.metadata.ownerReferences ?? []).map((ref) => ref.uid);
}

/** Files objects that have no controller under their namespace: the candidates for adoption there. */
export function orphansByNamespace(object: KubeObject): string[] {
  return controllerRefOf(object) ? [] : [object.metadata.namespace ?? ''];
}

/**
 * What a controller may claim, without scanning every object in the namespace: what it already
 * controls, and the orphans of its namespace. Needs both indexes on the informer.
 */
export function claimCandidates<T extends KubeObject>(informer: Informer<T>, controller: KubeObject): T[] {
  return [
    ...informer.byIndex(CONTROLLER_UID_INDEX, controller.metadata.uid!),
    ...informer.byIndex(ORPHAN_NAMESPACE_INDEX, controller.metadata.namespace ?? ''),
  ];
}
