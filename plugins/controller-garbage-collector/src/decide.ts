import type { KubeObject } from '@skiff/api';
import { hasFinalizer } from './finalizers.js';
import { FINALIZER } from './names.js';

/**
 * What became of an owner a dependent references:
 * - `exists`: the owner is there (or its kind is unknown to us, so we must assume it is);
 * - `absent`: gone, or replaced by another object of the same name (another uid);
 * - `waiting`: being deleted in the foreground, waiting for its dependents to go first.
 */
export type OwnerState = 'exists' | 'absent' | 'waiting';

export type DependentAction =
  | { action: 'keep' }
  | { action: 'removeOwnerReferences'; uids: string[] }
  | { action: 'delete'; propagationPolicy: 'Background' | 'Foreground' | 'Orphan'; unblockOwnerReferences?: true };

/** Being deleted in the foreground: gone only once its blocking dependents are. */
export function isDeletingDependents(object: KubeObject): boolean {
  return Boolean(object.metadata.deletionTimestamp) && hasFinalizer(object, FINALIZER.FOREGROUND);
}

/**
 * Kubernetes' garbage-collection decision for one dependent, given the state of each owner (by uid)
 * and its own dependents: with an owner still there, only references to vanished or foreground-deleting
 * owners are dropped; with none left, the dependent is deleted — in the foreground if an owner waits on
 * it and it has dependents of its own (so they go first), otherwise honouring its own orphan/foreground
 * finalizers, and in the background by default.
 *
 * A dependent of its own that is already deleting in the foreground may be waiting, through a cycle of
 * references, for an owner of this object: then this object's references stop blocking their owners
 * first, so the cycle cannot deadlock (kube-controller-manager breaks cycles the same way).
 */
export function decideForDependent(dependent: KubeObject, owners: ReadonlyMap<string, OwnerState>, dependents: readonly KubeObject[]): DependentAction {
  const refs = dependent.metadata.ownerReferences ?? [];
  const stateOf = (uid: string) => owners.get(uid) ?? 'exists';
  const solid = refs.filter((ref) => stateOf(ref.uid) === 'exists');
  const gone = refs.filter((ref) => stateOf(ref.uid) !== 'exists');
  if (refs.length === 0 || gone.length === 0) return { action: 'keep' };
  if (solid.length > 0) return { action: 'removeOwnerReferences', uids: gone.map((ref) => ref.uid) };
  if (gone.some((ref) => stateOf(ref.uid) === 'waiting') && dependents.length > 0) {
    if (dependents.some(isDeletingDependents)) return { action: 'delete', propagationPolicy: 'Foreground', unblockOwnerReferences: true };
    return { action: 'delete', propagationPolicy: 'Foreground' };
  }
  if (hasFinalizer(dependent, FINALIZER.ORPHAN)) return { action: 'delete', propagationPolicy: 'Orphan' };
  if (hasFinalizer(dependent, FINALIZER.FOREGROUND)) return { action: 'delete', propagationPolicy: 'Foreground' };
  return { action: 'delete', propagationPolicy: 'Background' };
}
