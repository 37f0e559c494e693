import type { ResourceDefinition } from '@skiff/kernel';

/**
 * Storage keys, laid out like Kubernetes's etcd keys: `/registry/<group>/<resource>/<namespace>/<name>`,
 * where the core group is left out (`/registry/pods/default/web`) and cluster-scoped kinds have no
 * namespace segment (`/registry/namespaces/default`). Prefixes end in "/" so `default` never matches
 * `default-2`.
 */
export function collectionPrefix(definition: ResourceDefinition, namespace?: string): string {
  const base = definition.group ? `/registry/${definition.group}/${definition.resource}/` : `/registry/${definition.resource}/`;
  return definition.namespaced && namespace ? `${base}${namespace}/` : base;
}

export function objectKey(definition: ResourceDefinition, namespace: string, name: string): string {
  return `${collectionPrefix(definition, definition.namespaced ? namespace : undefined)}${name}`;
}
