import type { KubeObject } from '@skiff/api';
import type { JsonPatchOperation } from '@skiff/controller-manager';

export function hasFinalizer(object: KubeObject, finalizer: string): boolean {
  return object.metadata.finalizers?.includes(finalizer) ?? false;
}

/**
 * A JSON patch removing one finalizer, guarded by the uid and resourceVersion the caller saw, so a
 * finalizer someone added meanwhile is not lost.
 */
export function removeFinalizerPatch(object: KubeObject, finalizer: string): JsonPatchOperation[] {
  const remaining = (object.metadata.finalizers ?? []).filter((name) => name !== finalizer);
  return [
    { op: 'test', path: '/metadata/uid', value: object.metadata.uid },
    { op: 'test', path: '/metadata/resourceVersion', value: object.metadata.resourceVersion },
    remaining.length > 0 ? { op: 'replace', path: '/metadata/finalizers', value: remaining } : { op: 'remove', path: '/metadata/finalizers' },
  ];
}
