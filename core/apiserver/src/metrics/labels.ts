import type { RequestInfo } from '../pipeline/request-info.js';

/**
 * The labels of `apiserver_request_total` and `apiserver_request_duration_seconds`, by kube-apiserver's rules, so
 * dashboards written for it read Skiff's numbers the same way.
 */
export interface RequestLabels {
  verb: string;
  dry_run: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  component: string;
}

const APPLY_PATCH = 'application/apply-patch+yaml';
/** Subresources served by a connecter upstream (an upgraded or proxied connection): verb CONNECT. */
const CONNECT_SUBRESOURCES: ReadonlySet<string> = new Set(['exec', 'attach', 'portforward', 'proxy']);
/** What a non-resource path that nothing serves is counted as (a path of the caller's choosing would be a label each). */
export const OTHER_PATH = 'other';

/** resource: one object (a name, or a create); namespace: a namespaced collection; cluster: any other resource URL. */
export function requestScope(info: Pick<RequestInfo, 'isResourceRequest' | 'verb' | 'name' | 'namespace'>): string {
  if (!info.isResourceRequest) return '';
  if (info.name || info.verb === 'create') return 'resource';
  if (info.namespace) return 'namespace';
  return 'cluster';
}

/**
 * The upper-case HTTP method, except: a GET (or HEAD) of a collection is LIST, a watch is WATCH, an apply patch is
 * APPLY, and a connection to a pod or service (exec, attach, port-forward, proxy) is CONNECT.
 */
export function requestVerb(
  method: string,
  info: Pick<RequestInfo, 'isResourceRequest' | 'verb' | 'subresource'>,
  scope: string,
  contentType: string | undefined,
): string {
  if (!info.isResourceRequest) return method;
  if (info.verb === 'watch') return 'WATCH';
  if (CONNECT_SUBRESOURCES.has(info.subresource)) return 'CONNECT';
  // A list narrowed to one name (fieldSelector=metadata.name=…) has scope resource but stays a LIST.
  if ((method === 'GET' || method === 'HEAD') && (scope !== 'resource' || info.verb === 'list')) return 'LIST';
  if (method === 'PATCH' && contentType !== undefined && contentType.startsWith(APPLY_PATCH)) return 'APPLY';
  return method;
}

/**
 * The labels of one request. `info` is undefined when its URL could not be parsed; `known` says the server serves the
 * resource (or, for a non-resource path, answered something other than 404), so unserved URLs count as one series.
 */
export function requestLabels(
  method: string,
  info: RequestInfo | undefined,
  dryRun: string | undefined,
  contentType: string | undefined,
  known: boolean,
): RequestLabels {
  const dry_run = dryRun === 'All' ? 'All' : '';
  if (!info || !info.isResourceRequest || !known) {
    const path = info && known ? info.path : OTHER_PATH;
    return { verb: method, dry_run, group: '', version: '', resource: '', subresource: path, scope: '', component: 'apiserver' };
  }
  const scope = requestScope(info);
  return {
    verb: requestVerb(method, info, scope, contentType),
    dry_run,
    group: info.apiGroup,
    version: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    scope,
    component: 'apiserver',
  };
}

/** Built-in API groups whose names have no dot; every other group (CRDs' included) has one. */
const DOTLESS_GROUPS: readonly string[] = ['apps', 'batch', 'autoscaling', 'policy', 'extensions'];
const REGISTRY = '/registry/';

/**
 * The `type` label of the store metrics: the resource's key prefix, as recent kube-apiserver releases report it
 * (`/registry/pods/`, `/registry/apps/deployments/`), whatever namespace or name the key goes on with.
 */
export function storeType(key: string): string {
  if (!key.startsWith(REGISTRY)) return key;
  const first = key.indexOf('/', REGISTRY.length);
  if (first < 0) return key;
  if (!isGroupAt(key, REGISTRY.length, first)) return key.slice(0, first + 1);
  const second = key.indexOf('/', first + 1);
  return second < 0 ? key : key.slice(0, second + 1);
}

/** Whether key[start, end) names an API group (compared in place: this runs on every store call). */
function isGroupAt(key: string, start: number, end: number): boolean {
  const dot = key.indexOf('.', start);
  if (dot >= 0 && dot < end) return true;
  for (const group of DOTLESS_GROUPS) if (end - start === group.length && key.startsWith(group, start)) return true;
  return false;
}
