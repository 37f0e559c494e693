import type { ResourceDefinition } from '@skiff/kernel';
import type { GroupVersions } from './groups.js';
import { subresourceInfo, verbsOf } from './subresources.js';

/** GET /api */
export function apiVersions(serverAddress: string) {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function groupVersion(group: string, version: string) {
  return { groupVersion: group ? `${group}/${version}` : version, version };
}

/** One entry of GET /apis, and the body of GET /apis/<group>. */
export function apiGroup(entry: GroupVersions) {
  return {
    name: entry.group,
    versions: entry.versions.map((version) => groupVersion(entry.group, version)),
    preferredVersion: groupVersion(entry.group, entry.versions[0]!),
  };
}

/** GET /apis */
export function apiGroupList(groups: GroupVersions[]) {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.filter((entry) => entry.group !== '').map(apiGroup) };
}

/** GET /api/v1 and /apis/<group>/<version>: one row per resource and one per subresource. */
export function apiResourceList(group: string, version: string, definitions: ResourceDefinition[]) {
  const resources: Record<string, unknown>[] = [];
  for (const definition of definitions) {
    resources.push({
      name: definition.resource,
      singularName: definition.singular,
      namespaced: definition.namespaced,
      kind: definition.kind,
      verbs: verbsOf(definition),
      ...(definition.shortNames?.length ? { shortNames: definition.shortNames } : {}),
      ...(definition.categories?.length ? { categories: definition.categories } : {}),
    });
    for (const subresource of definition.subresources ?? []) {
      const info = subresourceInfo(definition, subresource);
      const foreign = info.group !== group || info.version !== version;
      resources.push({
        name: `${definition.resource}/${subresource}`,
        singularName: '',
        namespaced: definition.namespaced,
        ...(foreign ? { group: info.group, version: info.version } : {}),
        kind: info.kind,
        verbs: info.verbs,
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
}
