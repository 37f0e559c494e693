import type { ApiResponse } from '@skiff/kernel';
import { admitConnect } from '../pipeline/admission.js';
import type { KindHandlers } from '../rest/handlers.js';
import type { RestContext } from '../rest/context.js';
import { forward, rawQuery } from './forward.js';
import { nodeTarget, podTarget, serviceTarget, type KubeletCredentials, type ProxyTarget } from './target.js';

/**
 * The verbs a proxy request is authorized as, by method (GET and HEAD: get, POST: create, PUT: update, PATCH:
 * patch, DELETE: delete); OPTIONS has none, as in kube-apiserver, so only a wildcard rule allows it.
 */
const PROXY_VERBS = ['get', 'create', 'update', 'patch', 'delete', ''];

/**
 * pods/proxy, services/proxy and nodes/proxy: any method, forwarded to the pod, an endpoint of the Service, or
 * the node's kubelet (reached with `kubelets`' credentials).
 */
export function registerProxyHandlers(handlers: KindHandlers, kubelets: KubeletCredentials): void {
  const targets: [string, string, (ctx: RestContext) => Promise<ProxyTarget>][] = [
    ['pods', 'PodProxyOptions', podTarget],
    ['services', 'ServiceProxyOptions', serviceTarget],
    ['nodes', 'NodeProxyOptions', (ctx) => nodeTarget(ctx, kubelets)],
  ];
  for (const [resource, optionsKind, target] of targets) {
    for (const verb of PROXY_VERBS) handlers.register({ group: '', resource, subresource: 'proxy', verb }, (ctx) => proxy(ctx, optionsKind, target));
  }
}

async function proxy(ctx: RestContext, optionsKind: string, targetOf: (ctx: RestContext) => Promise<ProxyTarget>): Promise<ApiResponse> {
  const { request, info } = ctx;
  const { path, pathPrepend } = proxyPath(request.path, info.namespace !== '' && !info.namesNamespace);
  await admitConnect(ctx, { kind: optionsKind, ...(path ? { path } : {}) });
  const target = await targetOf(ctx);
  // kube-apiserver's answer to a proxy request without a path: browsers get the same page with a slash.
  if (path === '' && (request.method === 'GET' || request.method === 'HEAD') && !request.headers.upgrade) {
    const query = rawQuery(request);
    return { status: 301, headers: { location: `${request.path}/${query ? `?${query}` : ''}` }, body: '' };
  }
  return forward({ request, ...target, path, pathPrepend, ...(request.signal ? { signal: request.signal } : {}) });
}

/**
 * Splits a proxy URL (`/api/v1/[namespaces/<ns>/]<resource>/<name>/proxy[/<path>]`) into the path for the
 * backend (with a leading slash, and a trailing one when the URL has one) and what comes before it.
 */
export function proxyPath(requestPath: string, namespaced: boolean): { path: string; pathPrepend: string } {
  const segments = requestPath.replace(/^\/+/, '').split('/');
  const before = 2 + (namespaced ? 2 : 0) + 3;
  const rest = segments.slice(before).join('/');
  let path = rest ? `/${rest}` : '';
  if (requestPath.endsWith('/') && !path.endsWith('/')) path += '/';
  const pathPrepend = path && requestPath.endsWith(path) ? requestPath.slice(0, -path.length) : requestPath;
  return { path, pathPrepend };
}
