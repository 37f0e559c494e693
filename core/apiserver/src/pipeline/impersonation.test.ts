import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAIN_STAGE, definePlugin, type AuditEvent, type AuthzAttributes } from '@skiff/kernel';
import { pod, startTestServer, type Policy, type TestServer } from '../test-support/cluster.js';

// Impersonation through the whole pipeline of a real HTTPS API server: which checks the authorize chain is
// asked, who the request then is (SelfSubjectReview, authorization, audit), and the refusals' wording.

const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const audit: AuditEvent[] = [];
const impersonateChecks: AuthzAttributes[] = [];

const fixtures = definePlugin({
  name: 'test-impersonation',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    // carol authenticates like alice but may impersonate nobody.
    kernel.hooks.authenticate.tap({ name: 'test-impersonation', stage: CHAIN_STAGE.TOKEN - 1 }, (request) =>
      request.headers.authorization === 'Bearer carol-token' ? { user: { username: 'carol', groups: ['system:authenticated'] } } : undefined,
    );
    kernel.hooks.authorize.tap({ name: 'test-impersonation', stage: -2000 }, (attributes) => {
      if (attributes.verb === 'impersonate') impersonateChecks.push(attributes);
      return undefined;
    });
    kernel.hooks.audit.tap('test-impersonation', (event) => void audit.push(event));
  },
});

/** alice may impersonate any user, group, uid or extra except the group "admins"; everyone may ask who they are and read. */
const policy: Policy = (attributes) => {
  if (attributes.verb === 'impersonate')
    return attributes.user.username === 'alice' && !(attributes.resource === 'groups' && attributes.name === 'admins') ? { decision: 'allow' } : undefined;
  if (attributes.resource === 'selfsubjectreviews' || ['get', 'list', 'watch'].includes(attributes.verb)) return { decision: 'allow' };
  return undefined;
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ plugins: [fixtures], policy });
});
afterAll(async () => {
  await server?.stop();
});

async function whoami(token: string, headers: Record<string, string | string[]>) {
  return server.request('POST', WHOAMI, {
    token,
    headers: headers as Record<string, string>,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
}

describe('impersonation', () => {
  it('lets system:masters act as any user, with the groups asked for and system:authenticated', async () => {
    const response = await whoami('admin-token', { 'impersonate-user': 'jane', 'impersonate-group': ['devs', 'ops'] });
    expect(response.status).toBe(201);
    expect(response.json.status.userInfo).toEqual({ username: 'jane', groups: ['devs', 'ops', 'system:authenticated'] });
  });

  it('passes the uid and extras, keys percent-decoded and lower-cased, and asks the authorize chain about each', async () => {
    impersonateChecks.length = 0;
    const response = await whoami('alice-token', {
      'impersonate-user': 'bob',
      'impersonate-uid': 'b-123',
      'impersonate-extra-Scopes': ['read', 'write'],
      'impersonate-extra-example.com%2Fteam': 'blue',
    });
    expect(response.status).toBe(201);
    expect(response.json.status.userInfo).toEqual({
      username: 'bob',
      uid: 'b-123',
      groups: ['system:authenticated'],
      extra: { scopes: ['read', 'write'], 'example.com/team': ['blue'] },
    });
    expect(
      impersonateChecks.map(({ user, apiGroup, resource, subresource, namespace, name }) => ({
        user: user.username,
        apiGroup,
        resource,
        subresource,
        namespace,
        name,
      })),
    ).toEqual([
      { user: 'alice', apiGroup: '', resource: 'users', subresource: '', namespace: '', name: 'bob' },
      { user: 'alice', apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: 'scopes', namespace: '', name: 'read' },
      { user: 'alice', apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: 'scopes', namespace: '', name: 'write' },
      { user: 'alice', apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: 'example.com/team', namespace: '', name: 'blue' },
      { user: 'alice', apiGroup: 'authentication.k8s.io', resource: 'uids', subresource: '', namespace: '', name: 'b-123' },
    ]);
  });

  it('refuses a user without the impersonate permission, worded like kube-apiserver', async () => {
    const user = await whoami('carol-token', { 'impersonate-user': 'jane' });
    expect(user.status).toBe(403);
    expect(user.json).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      message: 'users "jane" is forbidden: User "carol" cannot impersonate resource "users" in API group "" at the cluster scope',
    });
    const group = await whoami('alice-token', { 'impersonate-user': 'bob', 'impersonate-group': ['devs', 'admins'] });
    expect(group.status).toBe(403);
    expect(group.json.message).toBe('groups "admins" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope');
    const uid = await whoami('carol-token', { 'impersonate-user': 'carol', 'impersonate-uid': 'u-1' });
    expect(uid.json.message).toBe('users "carol" is forbidden: User "carol" cannot impersonate resource "users" in API group "" at the cluster scope');
  });

  it('checks ServiceAccounts in their namespace and gives them their groups when none are asked for', async () => {
    const refused = await whoami('carol-token', { 'impersonate-user': 'system:serviceaccount:apps:builder' });
    expect(refused.status).toBe(403);
    expect(refused.json.message).toBe(
      'serviceaccounts "builder" is forbidden: User "carol" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "apps"',
    );
    const allowed = await whoami('admin-token', { 'impersonate-user': 'system:serviceaccount:apps:builder' });
    expect(allowed.json.status.userInfo).toEqual({
      username: 'system:serviceaccount:apps:builder',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:apps', 'system:authenticated'],
    });
    const grouped = await whoami('admin-token', { 'impersonate-user': 'system:serviceaccount:apps:builder', 'impersonate-group': 'devs' });
    expect(grouped.json.status.userInfo.groups).toEqual(['devs', 'system:authenticated']);
  });

  it('makes system:anonymous unauthenticated', async () => {
    const response = await whoami('admin-token', { 'impersonate-user': 'system:anonymous' });
    expect(response.json.status.userInfo).toEqual({ username: 'system:anonymous', groups: ['system:unauthenticated'] });
  });

  it('answers 400 to groups, uid or extras without a user', async () => {
    const response = await whoami('admin-token', { 'impersonate-group': 'devs', 'impersonate-uid': 'x' });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ reason: 'BadRequest', message: 'requested impersonation of groups, uid without impersonating a user' });
  });

  it('authorizes the request itself as the impersonated user, and audits both users', async () => {
    audit.length = 0;
    const created = await server.request('POST', '/api/v1/namespaces/default/pods', { headers: { 'impersonate-user': 'jane' }, body: pod('as-jane') });
    expect(created.status).toBe(403);
    expect(created.json.message).toBe('pods is forbidden: User "jane" cannot create resource "pods" in API group "" in the namespace "default"');
    const complete = audit.find((event) => event.stage === 'ResponseComplete' && event.requestURI === '/api/v1/namespaces/default/pods')!;
    expect(complete.user?.username).toBe('admin');
    expect(complete.impersonatedUser).toEqual({ username: 'jane', groups: ['system:authenticated'] });
    // Without the headers nothing is impersonated and the event has no impersonatedUser.
    audit.length = 0;
    expect((await server.request('GET', '/api/v1/namespaces/default/pods')).status).toBe(200);
    expect(audit.find((event) => event.stage === 'ResponseComplete')?.impersonatedUser).toBeUndefined();
  });

  it('applies to in-process clients too (the loopback path shares the pipeline)', async () => {
    const handler = server.kernel.resolve('apiHandler');
    const token = handler.issueLoopbackToken({ username: 'carol', groups: ['system:authenticated'] });
    const response = await handler.handle({
      method: 'GET',
      path: '/api/v1/namespaces/default/pods',
      query: {},
      headers: { authorization: `Bearer ${token}`, 'impersonate-user': 'system:admin', 'impersonate-group': 'system:masters' },
    });
    expect(response.status).toBe(403);
    expect((response.body as { message: string }).message).toBe(
      'users "system:admin" is forbidden: User "carol" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
  });
});
