import type { KubeObject, Namespace, Pod } from '@skiff/api';
import type { DeleteOptions, ResourceDefinition } from '@skiff/kernel';
import { timestamp } from './metadata.js';

export type DeletionPlan = { action: 'remove' } | { action: 'mark'; object: KubeObject } | { action: 'unchanged' };

const FOREGROUND = 'foregroundDeletion';
const ORPHAN = 'orphan';
const DEFAULT_POD_GRACE_SECONDS = 30;

/**
 * What a DELETE does to an object, following Kubernetes:
 * - `Foreground` adds the `foregroundDeletion` finalizer and `Orphan` the `orphan` finalizer; the garbage
 *   collector controller deletes or orphans the dependents and then removes the finalizer. `Background`
 *   (the default) deletes at once and leaves the dependents to the collector.
 * - A pod bound to a node with a grace period is only marked (deletionTimestamp = now + grace); its kubelet
 *   stops it and finishes with a grace-0 delete. Unbound and finished pods go at once.
 * - An object with finalizers (or a namespace with spec.finalizers) is marked and stays until an update
 *   empties them.
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
  if (finalizers.length > 0 || namespaceFinalizers(definition, current).length > 0) {
    if (metadata.deletionTimestamp && metadata.deletionGracePeriodSeconds === 0 && !finalizersChanged) return { action: 'unchanged' };
    const marked = mark(current, { finalizers, deletionTimestamp: metadata.deletionTimestamp ?? timestamp(now), deletionGracePeriodSeconds: 0 });
    if (isNamespace(definition)) (marked.object as Namespace).status = { ...(current as Namespace).status, phase: 'Terminating' };
    return { action: 'mark', object: marked.object };
  }
  return { action: 'remove' };
}

/** Whether an object marked for deletion may now go: no finalizer holds it and no grace period runs. */
export function deletionComplete(definition: ResourceDefinition, object: KubeObject): boolean {
  const { deletionTimestamp, deletionGracePeriodSeconds, finalizers } = object.metadata;
  return Boolean(deletionTimestamp) && !finalizers?.length && !deletionGracePeriodSeconds && namespaceFinalizers(definition, object).length === 0;
}

function gracePeriod(definition: ResourceDefinition, object: KubeObject, options: DeleteOptions): number {
  if (definition.group !== '' || definition.resource !== 'pods') return 0;
  const pod = object as Pod;
  if (!pod.spec?.nodeName) return 0;
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return 0;
  return options.gracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? DEFAULT_POD_GRACE_SECONDS;
}

function withPolicyFinalizers(finalizers: string[], policy: DeleteOptions['propagationPolicy']): string[] {
  if (policy === undefined) return finalizers;
  const rest = finalizers.filter((finalizer) => finalizer !== FOREGROUND && finalizer !== ORPHAN);
  if (policy === 'Foreground') rest.push(FOREGROUND);
  if (policy === 'Orphan') rest.push(ORPHAN);
  return rest;
}

function isNamespace(definition: ResourceDefinition): boolean {
  return definition.group === '' && definition.resource === 'namespaces';
}

function namespaceFinalizers(definition: ResourceDefinition, object: KubeObject): string[] {
  return isNamespace(definition) ? ((object as Namespace).spec?.finalizers ?? []) : [];
}

function mark(
  current: KubeObject,
  changes: { finalizers: string[]; deletionTimestamp: string; deletionGracePeriodSeconds: number },
): { action: 'mark'; object: KubeObject } {
  const metadata = { ...current.metadata, deletionTimestamp: changes.deletionTimestamp, deletionGracePeriodSeconds: changes.deletionGracePeriodSeconds };
  if (changes.finalizers.length > 0) metadata.finalizers = changes.finalizers;
  else delete metadata.finalizers;
  return { action: 'mark', object: { ...current, metadata } };
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
