import type { FlowControlRequest } from '@skiff/kernel';

export interface RequestShape {
  user?: string;
  groups?: string[];
  verb?: string;
  path?: string;
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  query?: Record<string, string>;
  objects?: number;
  signal?: AbortSignal;
}

/**
 * A request as the API server hands it to flow control: a resource request when it names a resource, a
 * non-resource one (a GET of `path`) otherwise.
 */
export function flowRequest(shape: RequestShape): FlowControlRequest {
  const isResourceRequest = shape.resource !== undefined;
  return {
    user: { username: shape.user ?? 'alice', groups: shape.groups ?? ['system:authenticated'] },
    verb: shape.verb ?? 'get',
    isResourceRequest,
    apiGroup: shape.apiGroup ?? '',
    apiVersion: isResourceRequest ? 'v1' : '',
    resource: shape.resource ?? '',
    subresource: shape.subresource ?? '',
    namespace: shape.namespace ?? '',
    name: shape.name ?? '',
    path: shape.path ?? '/api/v1/pods',
    query: shape.query ?? {},
    signal: shape.signal,
    responseHeaders: {},
    objectCount: async () => shape.objects,
  };
}

export const serviceAccount = (namespace: string, name: string): Pick<RequestShape, 'user' | 'groups'> => ({
  user: `system:serviceaccount:${namespace}:${name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
});
