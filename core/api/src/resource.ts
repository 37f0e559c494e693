/** Names one kind of resource the way clients address it: group, version, plural resource name. */
export interface ResourceType {
  /** API group; "" for the core group. */
  group: string;
  version: string;
  /** Plural, lower-case: "pods", "deployments". */
  resource: string;
  kind: string;
  namespaced: boolean;
}

export function apiVersionOf(t: Pick<ResourceType, 'group' | 'version'>): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

/** The URL path of a collection or one object: /api/v1/namespaces/ns/pods/name[/sub]. */
export function resourcePath(t: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  let p = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
  if (t.namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${t.resource}`;
  if (name !== undefined) p += `/${encodeURIComponent(name)}`;
  if (subresource) p += `/${subresource}`;
  return p;
}

/** The built-in resource types every Skiff cluster serves. */
export const RESOURCES = Object.freeze({
  namespaces: { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false },
  nodes: { group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false },
  pods: { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true },
  persistentvolumeclaims: { group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true },
  events: { group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true },
  deployments: { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true },
  replicasets: { group: 'apps', version: 'v1', resource: 'replicasets', kind: 'ReplicaSet', namespaced: true },
  daemonsets: { group: 'apps', version: 'v1', resource: 'daemonsets', kind: 'DaemonSet', namespaced: true },
  statefulsets: { group: 'apps', version: 'v1', resource: 'statefulsets', kind: 'StatefulSet', namespaced: true },
  controllerrevisions: { group: 'apps', version: 'v1', resource: 'controllerrevisions', kind: 'ControllerRevision', namespaced: true },
  jobs: { group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job', namespaced: true },
  cronjobs: { group: 'batch', version: 'v1', resource: 'cronjobs', kind: 'CronJob', namespaced: true },
  leases: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true },
} satisfies Record<string, ResourceType>);
