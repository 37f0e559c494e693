import type { ResourceType } from '@skiff/api';
import type { ResourceDefinition, ResourceRegistry } from '@skiff/kernel';

/** A kind of object that lives in namespaces and goes when its namespace goes. */
export interface ContentResource {
  type: ResourceType;
  /** Served with the `deletecollection` verb, so one request empties it. */
  deleteCollection: boolean;
}

/** How resources are named in conditions and logs, as Kubernetes' namespace conditions name them: `pods.`, `deployments.apps`. */
export function groupResource(type: Pick<ResourceType, 'group' | 'resource'>): string {
  return `${type.resource}.${type.group}`;
}

/**
 * Every namespaced kind the API server serves that can be listed and deleted, read from its resource
 * registry at the time of asking, so kinds added by plugins are emptied too. A definition without
 * `verbs` is served with all of them.
 */
export function contentResources(registry: ResourceRegistry): ContentResource[] {
  return registry.list().flatMap((definition) => {
    const serves = (verb: string) => !definition.verbs || definition.verbs.includes(verb);
    if (!definition.namespaced || !serves('list') || !serves('delete')) return [];
    return [{ type: typeOf(definition), deleteCollection: serves('deletecollection') }];
  });
}

function typeOf({ group, version, resource, kind, namespaced }: ResourceDefinition): ResourceType {
  return { group, version, resource, kind, namespaced };
}
