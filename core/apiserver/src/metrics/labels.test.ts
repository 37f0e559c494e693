import { describe, expect, it } from 'vitest';
import { parseRequestInfo } from '../pipeline/request-info.js';
import { OTHER_PATH, requestLabels, storeType } from './labels.js';

function labels(method: string, path: string, query: Record<string, string> = {}, contentType?: string, known = true) {
  return requestLabels(method, parseRequestInfo(method, path, query), query.dryRun, contentType, known);
}

describe('request metric labels (kube-apiserver rules)', () => {
  it.each([
    ['GET', '/api/v1/namespaces/default/pods/web', {}, undefined, 'GET', 'resource'],
    ['GET', '/api/v1/namespaces/default/pods', {}, undefined, 'LIST', 'namespace'],
    ['GET', '/api/v1/pods', {}, undefined, 'LIST', 'cluster'],
    ['GET', '/api/v1/namespaces/default/pods', { watch: 'true' }, undefined, 'WATCH', 'namespace'],
    ['GET', '/api/v1/watch/namespaces/default/pods', {}, undefined, 'WATCH', 'namespace'],
    ['POST', '/api/v1/namespaces/default/configmaps', {}, undefined, 'POST', 'resource'],
    ['PUT', '/apis/apps/v1/namespaces/default/deployments/web/scale', {}, undefined, 'PUT', 'resource'],
    ['PATCH', '/api/v1/namespaces/default/configmaps/x', {}, 'application/apply-patch+yaml', 'APPLY', 'resource'],
    ['PATCH', '/api/v1/namespaces/default/configmaps/x', {}, 'application/merge-patch+json', 'PATCH', 'resource'],
    ['DELETE', '/api/v1/namespaces/default/configmaps', {}, undefined, 'DELETE', 'namespace'],
    ['POST', '/api/v1/namespaces/default/pods/web/exec', {}, undefined, 'CONNECT', 'resource'],
    ['GET', '/api/v1/namespaces/default/pods/web/log', {}, undefined, 'GET', 'resource'],
    ['GET', '/api/v1/nodes', { fieldSelector: 'metadata.name=n1' }, undefined, 'LIST', 'resource'],
  ])('%s %s %j → %s, scope %s', (method, path, query, contentType, verb, scope) => {
    const result = labels(method, path, query as Record<string, string>, contentType);
    expect(result.verb).toBe(verb);
    expect(result.scope).toBe(scope);
    expect(result.component).toBe('apiserver');
  });

  it('names the group, version, resource and subresource; dry_run is All or empty', () => {
    expect(labels('POST', '/apis/apps/v1/namespaces/default/deployments', { dryRun: 'All' })).toEqual({
      verb: 'POST',
      dry_run: 'All',
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      subresource: '',
      scope: 'resource',
      component: 'apiserver',
    });
    expect(labels('PUT', '/api/v1/namespaces/default/pods/web/status').subresource).toBe('status');
  });

  it('counts a non-resource path by its path, and paths nothing serves as one series', () => {
    expect(labels('GET', '/healthz')).toMatchObject({ verb: 'GET', group: '', version: '', resource: '', subresource: '/healthz', scope: '' });
    expect(labels('GET', '/no/such/thing', {}, undefined, false)).toMatchObject({ subresource: OTHER_PATH, resource: '' });
    expect(labels('GET', '/apis/nope.example.com/v1/widgets', {}, undefined, false)).toMatchObject({ subresource: OTHER_PATH, group: '' });
    expect(requestLabels('GET', undefined, undefined, undefined, false).subresource).toBe(OTHER_PATH);
  });

  it('types store keys by their resource prefix', () => {
    expect(storeType('/registry/pods/default/web')).toBe('/registry/pods/');
    expect(storeType('/registry/namespaces/default')).toBe('/registry/namespaces/');
    expect(storeType('/registry/apps/deployments/default/web')).toBe('/registry/apps/deployments/');
    expect(storeType('/registry/rbac.authorization.k8s.io/roles/')).toBe('/registry/rbac.authorization.k8s.io/roles/');
    expect(storeType('/registry/pods/')).toBe('/registry/pods/');
    expect(storeType('/registry/batch/jobs/ns/j')).toBe('/registry/batch/jobs/');
  });
});
