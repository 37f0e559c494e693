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
  /** The URL names a namespace object itself (/api/v1/namespaces/x[/status]): its namespace is its own name, as in Kubernetes. */
  namesNamespace?: boolean;
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
    else info.namesNamespace = true;
  }
  info.resource = rest[0] ?? '';
  info.name = rest[1] ?? '';
  info.subresource = rest[2] ?? '';
  // Only the proxy subresources take a path of their own (…/pods/<name>/proxy/<path>).
  if (rest.length > 3 && info.subresource !== 'proxy') throw errors.pathNotFound(path);
  checkPathName('namespace', info.namespace);
  checkPathName('name', info.name);

  const watch = watchPrefix || queryBool(query.watch);
  if (method === 'GET' || method === 'HEAD') info.verb = watch ? 'watch' : info.name ? 'get' : 'list';
  else if (method === 'DELETE') info.verb = info.name ? 'delete' : 'deletecollection';
  // As kube-apiserver: any other method (OPTIONS) has no verb on a resource.
  else info.verb = METHOD_VERBS[method] ?? '';

  // Like Kubernetes, a list or watch narrowed to one name is authorized as a request for that name.
  if ((info.verb === 'list' || info.verb === 'watch') && !info.name) info.name = nameFromFieldSelector(query.fieldSelector) ?? '';
  return info;
}

/** Longest name or namespace a URL may carry: the longest name any kind accepts (a DNS subdomain). */
const MAX_PATH_NAME_LENGTH = 253;

/**
 * A name in a URL must be one an object could have: Kubernetes refuses '.', '..', and names with '/'
 * or '%' (path segment names) with a 400; Skiff also refuses control characters and names longer than
 * any kind allows, which no object can have and the store cannot key.
 */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

function checkPathName(what: 'name' | 'namespace', name: string): void {
  if (!name) return;
  const problem =
    name === '.' || name === '..'
      ? `may not be '${name}'`
      : name.includes('/') || name.includes('%')
        ? "may not contain '/' or '%'"
        : hasControlCharacter(name)
          ? 'may not contain control characters'
          : name.length > MAX_PATH_NAME_LENGTH
            ? `may not be longer than ${MAX_PATH_NAME_LENGTH} characters (got ${name.length})`
            : undefined;
  if (problem) throw errors.badRequest(`invalid ${what} in the URL ${JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name)}: ${problem}`);
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
