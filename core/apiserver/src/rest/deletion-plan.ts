import type { KubeObject } from '@skiff/api';
import type { DeleteOptions, ResourceDefinition } from '@skiff/kernel';
import { timestamp } from './metadata.js';

export type DeletionPlan = { action: 'remove' } | { action: 'mark'; object: KubeObject } | { action: 'unchanged' };

const FOREGROUND = 'foregroundDeletion';
const ORPHAN = 'orphan';

/**
 * What a DELETE does to an object, following Kubernetes:
 * - `Foreground` adds the `foregroundDeletion` finalizer and `Orphan` the `orphan` finalizer; the garbage
 *   collector controller deletes or orphans the dependents and then removes the finalizer. `Background`
 *   (the default) deletes at once and leaves the dependents to the collector.
 * - A kind with a deletion grace period (a pod bound to a node) is only marked (deletionTimestamp = now +
 *   grace); whoever runs it (the kubelet) finishes with a grace-0 delete.
 * - An object with finalizers (or kind-held ones, a namespace's spec.finalizers) is marked and stays until
 *   an update empties them.
 */
export function planDeletion(definition: ResourceDefinition, current: KubeObject, options: DeleteOptions, now = Date.now()): DeletionPlan {
  const metadata = current.metadata;
  const finalizers = withPolicyFinalizers(metadata.finalizers ?? [], options.propagationPolicy);
  const finalizersChanged = !sameList(finalizers, metadata.finalizers ?? []);
  const grace = gracePeriod(definition, current, options);

  if (grace > 0) {
    const running = metadata.deletionTimestamp !== undefined && metadata.deletionGracePeriodSeconds !== undefined;
    if (running && metadata.deletionGracePeriodSeconds! <= grace && !finalizersChanged) return { action: 'unchanged' };
    return mark(current, {
      finalizers,
      deletionTimestamp: running && metadata.deletionGracePeriodSeconds! <= grace ? metadata.deletionTimestamp! : timestamp(now + grace * 1000),
      deletionGracePeriodSeconds: running ? Math.min(grace, metadata.deletionGracePeriodSeconds!) : grace,
    });
  }
  if (finalizers.length > 0 || kindFinalizers(definition, current).length > 0) {
    if (metadata.deletionTimestamp && metadata.deletionGracePeriodSeconds === 0 && !finalizersChanged) return { action: 'unchanged' };
    const marked = mark(current, { finalizers, deletionTimestamp: metadata.deletionTimestamp ?? timestamp(now), deletionGracePeriodSeconds: 0 });
    definition.onDeletionMarked?.(marked.object);
    return { action: 'mark', object: marked.object };
  }
  return { action: 'remove' };
}

/** Whether an object marked for deletion may now go: no finalizer holds it and no grace period runs. */
export function deletionComplete(definition: ResourceDefinition, object: KubeObject): boolean {
  const { deletionTimestamp, deletionGracePeriodSeconds, finalizers } = object.metadata;
  return Boolean(deletionTimestamp) && !finalizers?.length && !deletionGracePeriodSeconds && kindFinalizers(definition, object).length === 0;
}

function gracePeriod(definition: ResourceDefinition, object: KubeObject, options: DeleteOptions): number {
  return definition.deletionGracePeriod?.(object, options.gracePeriodSeconds) ?? 0;
}

function withPolicyFinalizers(finalizers: string[], policy: DeleteOptions['propagationPolicy']): string[] {
  if (policy === undefined) return finalizers;
  const rest = finalizers.filter((finalizer) => finalizer !== FOREGROUND && finalizer !== ORPHAN);
  if (policy === 'Foreground') rest.push(FOREGROUND);
  if (policy === 'Orphan') rest.push(ORPHAN);
  return rest;
}

function kindFinalizers(definition: ResourceDefinition, object: KubeObject): string[] {
  return definition.deletionFinalizers?.(object) ?? [];
}

function mark(
  current: KubeObject,
  changes: { finalizers: string[]; deletionTimestamp: string; deletionGracePeriodSeconds: number },
): { action: 'mark'; object: KubeObject } {
  const metadata = { ...{}, ...current.metadata, deletionTimestamp: changes.deletionTimestamp, deletionGracePeriodSeconds: changes.deletionGracePeriodSeconds };
  if (changes.finalizers.length > 0) metadata.finalizers = changes.finalizers;
  else delete metadata.finalizers;
  return { action: 'mark', object: { ...{}, ...current, metadata } };
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
