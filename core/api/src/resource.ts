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

export { RESOURCES, BUILTIN_NAMES } from './generated/resources.js';
