import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Status, UserInfo } from '@skiff/api';
import { Kernel, type AuthzAttributes } from '@skiff/kernel';
import { startTestCluster, type TestCluster } from '@skiff/testing';
import plugin from './index.js';

const reader: UserInfo = { username: 'auditor', groups: ['read-only', 'system:authenticated'] };
const developer: UserInfo = { username: 'dev', groups: ['system:authenticated'] };

function attributes(user: UserInfo, verb: string): AuthzAttributes {
  return {
    user,
    verb,
    isResourceRequest: true,
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'pods',
    subresource: '',
    namespace: 'default',
    name: '',
    path: '/api/v1/namespaces/default/pods',
  };
}

describe('the authorize tap', () => {
  const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);

  it('denies writes by members of the group, with a reason', async () => {
    for (const verb of ['create', 'update', 'patch', 'delete', 'deletecollection']) {
      expect(await kernel.hooks.authorize.promise(attributes(reader, verb))).toEqual({
        decision: 'deny',
        reason: 'members of group "read-only" may only read',
      });
    }
  });

  it('has no opinion on reads, or on anyone outside the group', async () => {
    for (const verb of ['get', 'list', 'watch']) expect(await kernel.hooks.authorize.promise(attributes(reader, verb))).toBeUndefined();
    expect(await kernel.hooks.authorize.promise(attributes(developer, 'create'))).toBeUndefined();
  });

  it('checks its options when the plugin loads', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, { group: ['a'] })).toThrow('option "group" must be a string');
  });
});

describe('in a whole cluster', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster({ plugins: [plugin] });
  });
  afterAll(() => cluster?.stop());

  /**
   * Sends a request as `user` through the cluster's whole request pipeline (authentication, every
   * authorizer, admission), the way in-process components do.
   */
  async function as(user: UserInfo, method: 'GET' | 'POST', path: string, body?: unknown) {
    const api = cluster.kernel.resolve('apiHandler');
    const headers = { authorization: `Bearer ${api.issueLoopbackToken(user)}`, 'content-type': 'application/json' };
    const response = await api.handle({ method, path, query: {}, headers, body });
    return { status: response.status, body: response.body as Status };
  }

  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } };

  it('lets members of the group read but not write; others still write', async () => {
    expect(await as(reader, 'GET', '/api/v1/namespaces/default/pods')).toMatchObject({ status: 200 });
    const denied = await as(reader, 'POST', '/api/v1/namespaces/default/pods', pod);
    expect(denied.status).toBe(403);
    expect(denied.body.message).toContain('members of group "read-only" may only read');
    expect(await as(developer, 'POST', '/api/v1/namespaces/default/pods', pod)).toMatchObject({ status: 201 });
  });
});
