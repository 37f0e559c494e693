import type { UserInfo } from '@skiff/api';
import type { ApiRequest, ApiResponse } from '@skiff/kernel';
import { compareVersionPriority } from './groups.js';

/**
 * A group/version another server answers (API aggregation, an APIService with a service): every request under
 * /apis/<group>/<version> reaches `serve` once it has passed authentication, authorization and flow control, and
 * discovery lists the group. Groups and versions the API server serves itself are never delegated.
 */
export interface DelegatedApi {
  group: string;
  version: string;
  /** Discovery order, as the APIService's spec gives it: higher first. */
  groupPriorityMinimum: number;
  versionPriority: number;
  /** Answers a request; its body is a Buffer, or unread. */
  serve(request: ApiRequest, user: UserInfo): Promise<ApiResponse>;
  /** The resources of the backend's APIResourceList for aggregated discovery, when known. */
  resources?(): DiscoveredResource[] | undefined;
}

/** One entry of an APIResourceList, as a backend answers /apis/<group>/<version>. */
export interface DiscoveredResource {
  name: string;
  singularName?: string;
  namespaced?: boolean;
  kind?: string;
  group?: string;
  version?: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
}

interface DelegatedGroup {
  name: string;
  versions: DelegatedApi[];
}

/** The delegated group/versions, by group; discovery lists groups by priority, their versions by priority. */
export class DelegatedApis {
  private readonly byKey = new Map<string, DelegatedApi>();

  add(api: DelegatedApi): () => void {
    const key = `${api.group}/${api.version}`;
    this.byKey.set(key, api);
    return () => {
      if (this.byKey.get(key) === api) this.byKey.delete(key);
    };
  }

  /** The delegate for a path under /apis/<group>/<version>, if any. */
  forPath(path: string): DelegatedApi | undefined {
    if (this.byKey.size === 0) return undefined;
    const match = /^\/apis\/([^/]+)\/([^/]+)(?:\/|$)/.exec(path);
    return match ? this.byKey.get(`${match[1]}/${match[2]}`) : undefined;
  }

  groups(): DelegatedGroup[] {
    const groups = new Map<string, DelegatedGroup>();
    for (const api of this.byKey.values()) {
      const group = groups.get(api.group) ?? { name: api.group, versions: [] };
      group.versions.push(api);
      groups.set(api.group, group);
    }
    const priority = (group: DelegatedGroup) => Math.max(...group.versions.map((api) => api.groupPriorityMinimum));
    for (const group of groups.values()) {
      group.versions.sort((a, b) => b.versionPriority - a.versionPriority || compareVersionPriority(a.version, b.version));
    }
    return [...groups.values()].sort((a, b) => priority(b) - priority(a) || a.name.localeCompare(b.name));
  }
}

function groupVersion(group: string, version: string) {
  return { groupVersion: `${group}/${version}`, version };
}

/** An APIGroup (an entry of /apis, the body of /apis/<group>) for a delegated group. */
export function delegatedApiGroup(group: DelegatedGroup) {
  return {
    name: group.name,
    versions: group.versions.map((api) => groupVersion(group.name, api.version)),
    preferredVersion: groupVersion(group.name, group.versions[0]!.version),
  };
}

/** An item of the aggregated discovery list for a delegated group, from what its backends reported. */
export function delegatedDiscoveryItem(group: DelegatedGroup) {
  return {
    metadata: { name: group.name },
    versions: group.versions.map((api) => {
      const resources = api.resources?.();
      return {
        version: api.version,
        freshness: resources ? 'Current' : 'Stale',
        resources: resources ? aggregatedResources(group.name, api.version, resources) : [],
      };
    }),
  };
}

function aggregatedResources(group: string, version: string, list: DiscoveredResource[]) {
  const parents = list.filter((resource) => !resource.name.includes('/'));
  return parents.map((resource) => {
    const subresources = list
      .filter((candidate) => candidate.name.startsWith(`${resource.name}/`))
      .map((sub) => ({
        subresource: sub.name.slice(resource.name.length + 1),
        responseKind: { group: sub.group ?? group, version: sub.version ?? version, kind: sub.kind ?? '' },
        verbs: sub.verbs ?? [],
      }));
    return {
      resource: resource.name,
      responseKind: { group: resource.group ?? group, version: resource.version ?? version, kind: resource.kind ?? '' },
      scope: resource.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: resource.singularName || resource.name,
      verbs: resource.verbs ?? [],
      ...(resource.shortNames?.length ? { shortNames: resource.shortNames } : {}),
      ...(resource.categories?.length ? { categories: resource.categories } : {}),
      ...(subresources.length ? { subresources } : {}),
    };
  });
}
