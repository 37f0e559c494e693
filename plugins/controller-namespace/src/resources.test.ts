import type { ResourceDefinition, ResourceRegistry } from '@skiff/kernel';
import { describe, expect, it } from 'vitest';
import { contentResources, groupResource } from './resources.js';

function registryOf(definitions: ResourceDefinition[]): ResourceRegistry {
  return {
    register: () => undefined,
    unregister: () => undefined,
    get: (group, resource) => definitions.find((d) => d.group === group && d.resource === resource),
    byKind: (group, kind) => definitions.find((d) => d.group === group && d.kind === kind),
    list: () => definitions,
  };
}

function definition(resource: string, extra: Partial<ResourceDefinition> = {}): ResourceDefinition {
  return { group: 'example.com', version: 'v1', kind: resource, resource, singular: resource, namespaced: true, ...extra };
}

describe('contentResources', () => {
  it('takes namespaced kinds that can be listed and deleted, noting which serve deletecollection', () => {
    const registry = registryOf([
      definition('all-verbs'),
      definition('no-collection', { verbs: ['get', 'list', 'delete'] }),
      definition('create-only', { verbs: ['create'] }),
      definition('cluster-wide', { namespaced: false }),
    ]);
    expect(contentResources(registry).map(({ type, deleteCollection }) => `${groupResource(type)} ${deleteCollection}`)).toEqual([
      'all-verbs.example.com true',
      'no-collection.example.com false',
    ]);
  });

  it('names core resources with a trailing dot, as the namespace conditions of Kubernetes do', () => {
    expect(groupResource({ group: '', resource: 'pods' })).toBe('pods.');
  });
});
