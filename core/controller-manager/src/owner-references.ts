import { apiVersionOf, type KubeObject, type OwnerReference, type ResourceType } from '@skiff/api';

/** The owner reference marked `controller: true`, if any: the one object that manages this one. */
export function controllerRefOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

/**
 * The cached owner a controller reference in `namespace` points to: `ref` names the owner's kind and group,
 * and the cached object is still the one it named (same uid), not a successor under the same name.
 */
export function resolveControllerRef<T extends KubeObject>(
  owners: { get(key: string): T | undefined },
  ownerType: ResourceType,
  namespace: string | undefined,
  ref: OwnerReference | undefined,
): T | undefined {
  // Group only, any version (a core owner's apiVersion is just `v1`); the uid decides.
  if (!ref || ref.kind !== ownerType.kind || groupOf(ref.apiVersion) !== ownerType.group) return undefined;
  const owner = owners.get(`${namespace}/${ref.name}`);
  return owner?.metadata.uid === ref.uid ? owner : undefined;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** The reference a controller puts on what it creates or adopts; it also blocks foreground deletion of the owner. */
export function newControllerRef(owner: KubeObject, ownerType: ResourceType): OwnerReference {
  return {
    apiVersion: apiVersionOf(ownerType),
    kind: ownerType.kind,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export type JsonPatchOperation = { op: 'test' | 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/**
 * A JSON patch that sets an object's ownerReferences. It first tests the uid and resourceVersion the
 * caller saw, so it fails instead of overwriting references someone else changed in the meantime.
 */
export function ownerReferencesPatch(object: KubeObject, references: readonly OwnerReference[]): JsonPatchOperation[] {
  const guards: JsonPatchOperation[] = [
    { op: 'test', path: '/metadata/uid', value: object.metadata.uid },
    { op: 'test', path: '/metadata/resourceVersion', value: object.metadata.resourceVersion },
  ];
  if (references.length > 0) return [...guards, { op: 'add', path: '/metadata/ownerReferences', value: references }];
  if (object.metadata.ownerReferences === undefined) return guards;
  return [...guards, { op: 'remove', path: '/metadata/ownerReferences' }];
}
