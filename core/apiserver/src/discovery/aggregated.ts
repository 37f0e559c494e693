import type { ResourceDefinition } from '@skiff/kernel';
import type { GroupVersions } from './groups.js';
import { subresourceInfo, verbsOf } from './subresources.js';

export type AggregatedVersion = 'v2' | 'v2beta1';

/**
 * The aggregated discovery variant the client asked for, in its order of preference, or undefined for
 * legacy discovery. kubectl 1.27–1.29 list v2beta1, 1.30+ list v2 first.
 */
export function aggregatedVersionOf(accept: string | undefined): AggregatedVersion | undefined {
  if (!accept || !accept.includes('apidiscovery.k8s.io')) return undefined;
  for (const entry of accept.split(',')) {
    const params = entry.split(';').map((part) => part.trim());
    if (params[0] !== 'application/json') continue;
    if (!params.includes('g=apidiscovery.k8s.io') || !params.includes('as=APIGroupDiscoveryList')) continue;
    if (params.includes('v=v2')) return 'v2';
    if (params.includes('v=v2beta1')) return 'v2beta1';
  }
  return undefined;
}

/** The exact Content-Type kubectl checks before it trusts an aggregated answer. */
export function aggregatedContentType(version: AggregatedVersion): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

export function aggregatedDiscovery(version: AggregatedVersion, groups: GroupVersions[]) {
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: groups.map((entry) => ({
      metadata: { name: entry.group },
      versions: entry.versions.map((groupVersion) => ({
        version: groupVersion,
        freshness: 'Current',
        resources: (entry.resources.get(groupVersion) ?? []).map(resourceEntry),
      })),
    })),
  };
}

function resourceEntry(definition: ResourceDefinition) {
  return {
    resource: definition.resource,
    responseKind: { group: definition.group, version: definition.version, kind: definition.kind },
    scope: definition.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: definition.singular,
    verbs: verbsOf(definition),
    ...(definition.shortNames?.length ? { shortNames: definition.shortNames } : {}),
    ...(definition.categories?.length ? { categories: definition.categories } : {}),
    ...(definition.subresources?.length
      ? {
          subresources: definition.subresources.map((subresource) => {
            const info = subresourceInfo(definition, subresource);
            return { subresource, responseKind: { group: info.group, version: info.version, kind: info.kind }, verbs: info.verbs };
          }),
        }
      : {}),
  };
}
