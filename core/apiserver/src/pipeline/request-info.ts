import { errors } from '@skiff/api';
import { queryBool } from '../util/query.js';

/** What a request is about, parsed from method, path and query (Kubernetes's RequestInfo). */
export interface RequestInfo {
  /** False for /version, /healthz, /api, /apis, /openapi/…: anything that is not a resource URL. */
  isResourceRequest: boolean;
  path: string;
  /** get, list, watch, create, update, patch, delete, deletecollection; lower-case HTTP method otherwise. */
  verb: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** Subresources of a namespace, as opposed to resources inside it (/namespaces/x/status vs /namespaces/x/pods). */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

const METHOD_VERBS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch' };

export function parseRequestInfo(method: string, path: string, query: Record<string, string | undefined>): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
  };
  const segments = splitPath(path);
  let rest: string[];
  if (segments[0] === 'api' && segments.length >= 3) {
    info.apiVersion = segments[1]!;
    rest = segments.slice(2);
  } else if (segments[0] === 'apis' && segments.length >= 4) {
    info.apiGroup = segments[1]!;
    info.apiVersion = segments[2]!;
    rest = segments.slice(3);
  } else {
    return info;
  }
  info.isResourceRequest = true;

  // The deprecated /watch/ prefix (GET /api/v1/watch/namespaces/x/pods) still exists in Kubernetes.
  let watchPrefix = false;
  if (rest[0] === 'watch' && method === 'GET') {
    watchPrefix = true;
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces' && rest.length > 1) {
    info.namespace = rest[1]!;
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  }
  info.resource = rest[0] ?? '';
  info.name = rest[1] ?? '';
  info.subresource = rest[2] ?? '';
  if (rest.length > 3) throw errors.pathNotFound(path);

  const watch = watchPrefix || queryBool(query.watch);
  if (method === 'GET') info.verb = watch ? 'watch' : info.name ? 'get' : 'list';
  else if (method === 'DELETE') info.verb = info.name ? 'delete' : 'deletecollection';
  else info.verb = METHOD_VERBS[method] ?? info.verb;

  // Like Kubernetes, a list or watch narrowed to one name is authorized as a request for that name.
  if ((info.verb === 'list' || info.verb === 'watch') && !info.name) info.name = nameFromFieldSelector(query.fieldSelector) ?? '';
  return info;
}

function splitPath(path: string): string[] {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (!part) continue;
    if (!part.includes('%')) {
      out.push(part);
      continue;
    }
    try {
      out.push(decodeURIComponent(part));
    } catch {
      throw errors.badRequest(`malformed path segment ${JSON.stringify(part)}`);
    }
  }
  return out;
}

function nameFromFieldSelector(selector: string | undefined): string | undefined {
  if (!selector) return undefined;
  for (const term of selector.split(',')) {
    const match = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term);
    if (match) return match[1];
  }
  return undefined;
}
