import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WireReader } from '@skiff/api/protobuf';
import { startTestServer, type TestServer } from '../test-support/cluster.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    policy: (attributes) => {
      if (attributes.user.username === 'admin') return { decision: 'allow' };
      if (attributes.resource === 'selfsubjectaccessreviews' || attributes.resource === 'selfsubjectreviews') return { decision: 'allow' };
      if (attributes.verb === 'list' && attributes.resource === 'pods') return { decision: 'allow' };
      if (attributes.verb === 'delete') return { decision: 'deny', reason: 'deletes are reviewed' };
      return undefined;
    },
  });
});
afterAll(async () => {
  await server?.stop();
});

describe('version and health', () => {
  it('reports Kubernetes 1.36, the release its API facts come from', async () => {
    const { json } = await server.request('GET', '/version?timeout=32s');
    expect(json).toMatchObject({ major: '1', minor: '36', gitVersion: 'v1.36.0-skiff.0.1.0' });
  });

  it('answers ok on /healthz, /livez and /readyz', async () => {
    for (const path of ['/healthz', '/livez', '/readyz', '/readyz?verbose']) {
      const response = await server.request('GET', path);
      expect(response.status).toBe(200);
      expect(response.text).toBe('ok');
    }
  });
});

describe('legacy discovery', () => {
  it('serves /api and /apis', async () => {
    const api = (await server.request('GET', '/api?timeout=32s')).json;
    expect(api).toEqual({
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: server.info.url.slice(8) }],
    });
    const apis = (await server.request('GET', '/apis')).json;
    expect(apis.kind).toBe('APIGroupList');
    expect(apis.groups).toContainEqual({
      name: 'apps',
      versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
      preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
    });
    expect(apis.groups.map((group: any) => group.name)).toContain('authorization.k8s.io');
    expect((await server.request('GET', '/apis/apps')).json).toMatchObject({ kind: 'APIGroup', name: 'apps' });
  });

  it('lists resources with short names, categories, verbs and subresource rows', async () => {
    const list = (await server.request('GET', '/api/v1')).json;
    expect(list).toMatchObject({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'v1' });
    const byName = new Map(list.resources.map((resource: any) => [resource.name, resource]));
    expect(byName.get('pods')).toEqual({
      name: 'pods',
      singularName: 'pod',
      namespaced: true,
      kind: 'Pod',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['po'],
      categories: ['all'],
    });
    expect(byName.get('pods/eviction')).toEqual({
      name: 'pods/eviction',
      singularName: '',
      namespaced: true,
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
      verbs: ['create'],
    });
    expect(byName.get('pods/status')).toMatchObject({ kind: 'Pod', verbs: ['get', 'patch', 'update'] });
    expect(byName.get('pods/binding')).toMatchObject({ kind: 'Binding', verbs: ['create'] });
    const apps = (await server.request('GET', '/apis/apps/v1')).json;
    expect(apps.resources).toContainEqual({
      name: 'deployments/scale',
      singularName: '',
      namespaced: true,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
    expect((await server.request('GET', '/apis/apps/v9')).status).toBe(404);
  });
});

describe('aggregated discovery', () => {
  const accept130 =
    'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
  const accept127 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

  it('answers v2 with the exact Content-Type kubectl checks', async () => {
    const response = await server.request('GET', '/api', { headers: { accept: accept130 } });
    expect(response.headers['content-type']).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    expect(response.json).toMatchObject({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {} });
    expect(response.json.items).toHaveLength(1);
    const core = response.json.items[0];
    expect(core.metadata).toEqual({ name: '' });
    const pods = core.versions[0].resources.find((resource: any) => resource.resource === 'pods');
    expect(pods).toMatchObject({
      responseKind: { group: '', version: 'v1', kind: 'Pod' },
      scope: 'Namespaced',
      singularResource: 'pod',
      shortNames: ['po'],
      categories: ['all'],
    });
    expect(pods.subresources).toContainEqual({
      subresource: 'eviction',
      responseKind: { group: 'policy', version: 'v1', kind: 'Eviction' },
      verbs: ['create'],
    });
    expect(core.versions[0].freshness).toBe('Current');
  });

  it('answers v2beta1 to kubectl 1.27–1.29 and puts the other groups under /apis', async () => {
    const response = await server.request('GET', '/apis', { headers: { accept: accept127 } });
    expect(response.headers['content-type']).toBe('application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList');
    const names = response.json.items.map((item: any) => item.metadata.name);
    expect(names).toContain('apps');
    expect(names).not.toContain('');
  });
});

describe('OpenAPI', () => {
  it('answers /openapi/v2 in JSON unless protobuf is asked for, as kube-apiserver negotiates it', async () => {
    for (const accept of ['', 'application/json', '*/*', 'application/json, */*', 'application/*']) {
      const response = await server.request('GET', '/openapi/v2', { headers: { accept } });
      expect(response.status, accept).toBe(200);
      expect(response.headers['content-type'], accept).toBe('application/json');
      expect(response.json, accept).toMatchObject({ swagger: '2.0', info: { title: 'Kubernetes' } });
    }
    for (const accept of [
      'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
      'application/json;q=0.5, application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
    ]) {
      const response = await server.request('GET', '/openapi/v2?timeout=32s', { headers: { accept } });
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
      const reader = new WireReader(response.raw);
      expect(reader.tag()).toEqual({ field: 1, wireType: 2 });
      expect(reader.string()).toBe('2.0');
    }
    expect((await server.request('GET', '/openapi/v2', { headers: { accept: 'text/html' } })).status).toBe(406);
  });

  it('tags both forms of /openapi/v2 with the JSON text’s ETag and answers a matching If-None-Match with 304', async () => {
    const first = await server.request('GET', '/openapi/v2');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    expect(first.headers.vary).toBe('Accept');
    const protobuf = await server.request('GET', '/openapi/v2', { headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    expect(protobuf.headers.etag).toBe(etag);
    for (const ifNoneMatch of [etag, `"other", W/${etag}`, '*']) {
      const again = await server.request('GET', '/openapi/v2', { headers: { 'if-none-match': ifNoneMatch } });
      expect(again.status, ifNoneMatch).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.etag).toBe(etag);
    }
    expect((await server.request('GET', '/openapi/v2', { headers: { 'if-none-match': '"stale"' } })).status).toBe(200);
  });

  it('serves v3 documents with a patch operation per kind that takes fieldValidation, under a stable hash', async () => {
    const root = (await server.request('GET', '/openapi/v3')).json;
    const url: string = root.paths['apis/apps/v1'].serverRelativeURL;
    expect(url).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);
    expect((await server.request('GET', '/openapi/v3')).json).toEqual(root);
    const document = (await server.request('GET', `${url}&timeout=32s`)).json;
    const patch = document.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: 'apps', version: 'v1', kind: 'Deployment' });
    expect(patch.parameters).toContainEqual(expect.objectContaining({ name: 'fieldValidation', in: 'query' }));
    // Full schemas are served, so kubectl may compute strategic merge patches from them.
    expect(Object.keys(patch.requestBody.content)).toContain('application/strategic-merge-patch+json');
    const core = (await server.request('GET', root.paths['api/v1'].serverRelativeURL)).json;
    expect(core.paths['/api/v1/namespaces/{name}'].patch['x-kubernetes-group-version-kind']).toEqual({ group: '', version: 'v1', kind: 'Namespace' });
    expect((await server.request('GET', '/openapi/v3/apis/nothing/v1')).status).toBe(404);
  });
});

describe('self reviews', () => {
  it('answers SelfSubjectAccessReview with the authorization chain’s decision for the caller', async () => {
    const ask = (attributes: Record<string, string>) =>
      server.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        token: 'alice-token',
        body: { kind: 'SelfSubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', spec: { resourceAttributes: attributes } },
      });
    const allowed = await ask({ namespace: 'default', verb: 'list', resource: 'pods' });
    expect(allowed.status).toBe(201);
    expect(allowed.json).toMatchObject({ kind: 'SelfSubjectAccessReview', status: { allowed: true } });
    const denied = await ask({ namespace: 'default', verb: 'delete', resource: 'pods' });
    expect(denied.json.status).toEqual({ allowed: false, denied: true, reason: 'deletes are reviewed' });
    const noOpinion = await ask({ namespace: 'default', verb: 'create', resource: 'pods' });
    expect(noOpinion.json.status).toEqual({ allowed: false });
  });

  it('answers SelfSubjectReview with who the caller is', async () => {
    const response = await server.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { token: 'alice-token', body: {} });
    expect(response.status).toBe(201);
    expect(response.json.status.userInfo).toEqual({ username: 'alice', uid: 'alice', groups: ['system:authenticated'] });
  });

  it('includes a reason in 403s when the authorizer gave one', async () => {
    const response = await server.request('DELETE', '/api/v1/namespaces/default/pods/x', { token: 'alice-token' });
    expect(response.status).toBe(403);
    expect(response.json.message).toBe(
      'pods "x" is forbidden: User "alice" cannot delete resource "pods" in API group "" in the namespace "default": deletes are reviewed',
    );
  });
});
