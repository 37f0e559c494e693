import type { KubeObject } from '@skiff/api';
import { controllerRefOf } from './owner-references.js';

/**
 * Informer index names are shared by every controller using the same informer, so these are named
 * after what they file objects by and defined once, here.
 */
export const CONTROLLER_UID_INDEX = 'metadata.ownerReferences[controller].uid';
export const OWNER_UID_INDEX = 'metadata.ownerReferences.uid';

/** Files an object under the uid of its controller (the owner reference with `controller: true`). */
export function byControllerUid(object: KubeObject): string[] {
  const ref = controllerRefOf(object);
  return ref ? [ref.uid] : [];
}

/** Files an object under the uid of every owner it references. */
export function byOwnerUid(object: KubeObject): string[] {
  return (object.metadata.ownerReferences ?? []).map((ref) => ref.uid);
}
