import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type KubeObject } from '@skiff/api';
import apiServer from '@skiff/apiserver';
import { createLoopbackClient } from '@skiff/client';
import { Kernel, waitFor, type ApiClient, type AuthzAttributes } from '@skiff/kernel';
import store from '@skiff/store';
import plugin, { RbacPolicy, ruleAllows, uncoveredRules } from './index.js';

const attributes = (overrides: Partial<AuthzAttributes>): AuthzAttributes => ({
  user: { username: 'jane', groups: ['devs', 'system:authenticated'] },
  verb: 'get',
  isResourceRequest: true,
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  namespace: 'team-a',
  name: 'web',
  path: '/api/v1/namespaces/team-a/pods/web',
  ...overrides,
});

describe('rules', () => {
  it('match verbs, groups, resource/subresource, */subresource, names and paths as RBAC does', () => {
    expect(ruleAllows({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, attributes({}))).toBe(true);
    expect(ruleAllows({ verbs: ['list'], apiGroups: [''], resources: ['pods'] }, attributes({}))).toBe(false);
    expect(ruleAllows({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, attributes({ apiGroup: 'apps', resource: 'deployments' }))).toBe(true);
    expect(ruleAllows({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, attributes({ subresource: 'log' }))).toBe(false);
    expect(ruleAllows({ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, attributes({ subresource: 'log' }))).toBe(true);
    expect(
      ruleAllows(
        { verbs: ['get'], apiGroups: ['apps'], resources: ['*/scale'] },
        attributes({ apiGroup: 'apps', resource: 'deployments', subresource: 'scale' }),
      ),
    ).toBe(true);
    expect(ruleAllows({ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['web'] }, attributes({}))).toBe(true);
    expect(ruleAllows({ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['db'] }, attributes({}))).toBe(false);
    expect(ruleAllows({ verbs: ['list'], apiGroups: [''], resources: ['pods'], resourceNames: ['web'] }, attributes({ verb: 'list', name: '' }))).toBe(false);
    const path = (p: string) => attributes({ isResourceRequest: false, path: p, resource: '', namespace: '', name: '' });
    expect(ruleAllows({ verbs: ['get'], nonResourceURLs: ['/healthz', '/healthz/*'] }, path('/healthz/etcd'))).toBe(true);
    expect(ruleAllows({ verbs: ['get'], nonResourceURLs: ['/healthz'] }, path('/healthz/etcd'))).toBe(false);
  });

  it('find what a role would grant beyond the rules held, a * only covered by a *', () => {
    const held = [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'secrets'] }];
    expect(uncoveredRules(held, [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }])).toEqual([]);
    expect(uncoveredRules(held, [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] }])).toEqual([
      { verbs: ['delete'], apiGroups: [''], resources: ['pods'] },
    ]);
    expect(uncoveredRules(held, [{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }])).toHaveLength(1);
    expect(uncoveredRules([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], [{ verbs: ['*'], apiGroups: ['x'], resources: ['*'] }])).toEqual([]);
  });
});

describe('the policy index', () => {
  it('decides from bindings of the user, its groups and ServiceAccounts, names the grant, and forgets decisions on change', () => {
    const policy = new RbacPolicy();
    const role = (name: string, rules: object[]) => ({ metadata: { name }, rules }) as KubeObject;
    policy.apply('/registry/rbac.authorization.k8s.io/clusterroles/reader', role('reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]));
    policy.apply('/registry/rbac.authorization.k8s.io/rolebindings/team-a/devs', {
      metadata: { name: 'devs', namespace: 'team-a' },
      roleRef: { kind: 'ClusterRole', name: 'reader' },
      subjects: [{ kind: 'Group', name: 'devs' }],
    } as KubeObject);
    expect(policy.authorize(attributes({}))).toEqual({
      decision: 'allow',
      reason: 'RBAC: allowed by RoleBinding "devs/team-a" of ClusterRole "reader" to Group "devs"',
    });
    expect(policy.authorize(attributes({ namespace: 'team-b' }))).toBeUndefined();
    const robot = { username: 'system:serviceaccount:team-b:robot', groups: ['system:serviceaccounts', 'system:authenticated'] };
    expect(policy.authorize(attributes({ user: robot, namespace: 'team-b' }))).toBeUndefined();
    policy.apply('/registry/rbac.authorization.k8s.io/clusterrolebindings/robots', {
      metadata: { name: 'robots' },
      roleRef: { kind: 'ClusterRole', name: 'reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'team-b' }],
    } as KubeObject);
    expect(policy.authorize(attributes({ user: robot, namespace: 'team-b' }))?.reason).toBe(
      'RBAC: allowed by ClusterRoleBinding "robots" of ClusterRole "reader" to ServiceAccount "robot/team-b"',
    );
    policy.apply('/registry/rbac.authorization.k8s.io/clusterroles/reader', undefined);
    expect(policy.authorize(attributes({}))).toBeUndefined();
  });
});

describe('RBAC in a real control plane', () => {
  let kernel: Kernel;
  let dataDir: string;
  let admin: ApiClient;
  const as = (username: string, ...groups: string[]) =>
    createLoopbackClient(kernel.resolve('apiHandler'), { username, groups: [...groups, 'system:authenticated'] });
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => 'allowed',
      (err: Error) => err.message,
    );

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'skiff-rbac-'));
    kernel = new Kernel({ config: { port: 0, logLevel: 'silent', dataDir, rootDir: dataDir } }).use(store).use(apiServer, { port: 0 }).use(plugin);
    await kernel.start();
    admin = as('root', 'system:masters');
    for (const name of ['team-a', 'team-b']) await admin.create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await admin.create(
      RESOURCES.rolebindings,
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'erin-edit', namespace: 'team-a' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'erin' }],
      } as KubeObject,
      'team-a',
    );
  }, 60_000);
  afterAll(async () => {
    await kernel?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('bootstraps the default roles, with admin, edit and view aggregated', async () => {
    const view = await admin.get<KubeObject & { rules: { resources: string[] }[] }>(RESOURCES.clusterroles, 'view');
    expect(view.metadata.annotations?.['rbac.authorization.kubernetes.io/autoupdate']).toBe('true');
    expect(view.rules.some((rule) => rule.resources.includes('pods'))).toBe(true);
    // metrics.k8s.io, through system:aggregated-metrics-reader: a viewer may run kubectl top.
    await waitFor('view to aggregate the metrics reader', async () => {
      const aggregated = await admin.get<KubeObject & { rules: { apiGroups?: string[]; resources: string[] }[] }>(RESOURCES.clusterroles, 'view');
      return aggregated.rules.some((rule) => rule.apiGroups?.includes('metrics.k8s.io') && rule.resources.includes('pods'));
    });
    const admins = await admin.get<KubeObject & { rules: { resources: string[] }[] }>(RESOURCES.clusterroles, 'admin');
    expect(admins.rules.some((rule) => rule.resources.includes('rolebindings'))).toBe(true);
    await admin.get(RESOURCES.clusterrolebindings, 'system:kube-scheduler');
  });

  it("lets kube-proxy's identity read what a service proxy follows, ServiceCIDRs included", async () => {
    const proxy = as('system:kube-proxy');
    for (const resource of [RESOURCES.services, RESOURCES.endpointslices, RESOURCES.servicecidrs]) {
      expect({ resource: resource.resource, answer: await refusal(proxy.list(resource)) }).toEqual({ resource: resource.resource, answer: 'allowed' });
    }
    expect(await refusal(proxy.list(RESOURCES.secrets))).toMatch(/forbidden/);
  });

  it('lets a namespaced editor work in its namespace only', async () => {
    const erin = as('erin');
    await erin.list(RESOURCES.pods, 'team-a');
    await erin.create(RESOURCES.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }, 'team-a');
    expect(await refusal(erin.list(RESOURCES.pods, 'team-b'))).toBe(
      'pods is forbidden: User "erin" cannot list resource "pods" in API group "" in the namespace "team-b"',
    );
    expect(await refusal(erin.list(RESOURCES.nodes))).toContain('cannot list resource "nodes"');
  });

  it('refuses roles and bindings that grant more than their author holds', async () => {
    await admin.create(
      RESOURCES.rolebindings,
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'ada-admin', namespace: 'team-a' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'ada' }],
      } as KubeObject,
      'team-a',
    );
    const ada = as('ada');
    const role = (name: string, rules: object[]) =>
      ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace: 'team-a' }, rules }) as KubeObject;
    expect(await refusal(ada.create(RESOURCES.roles, role('readers', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]), 'team-a'))).toBe(
      'allowed',
    );
    expect(await refusal(ada.create(RESOURCES.roles, role('nodes', [{ verbs: ['get'], apiGroups: [''], resources: ['nodes'] }]), 'team-a'))).toBe(
      'roles.rbac.authorization.k8s.io "nodes" is forbidden: user "ada" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}',
    );
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'takeover', namespace: 'team-a' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'ada' }],
    } as KubeObject;
    expect(await refusal(ada.create(RESOURCES.rolebindings, binding, 'team-a'))).toContain('is attempting to grant RBAC permissions not currently held');
    const dangling = {
      ...binding,
      metadata: { name: 'dangling', namespace: 'team-a' },
      roleRef: { ...(binding as any).roleRef, kind: 'Role', name: 'missing' },
    };
    expect(await refusal(ada.create(RESOURCES.rolebindings, dangling as KubeObject, 'team-a'))).toBe('roles.rbac.authorization.k8s.io "missing" not found');
  });

  it('keeps aggregationRules to cluster admins, but lets a role manager relabel an aggregated role', async () => {
    const manage = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'role-manager' },
      rules: [{ verbs: ['get', 'list', 'create', 'update'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'] }],
    } as KubeObject;
    await admin.create(RESOURCES.clusterroles, manage);
    await admin.create(RESOURCES.clusterrolebindings, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'max-manages-roles' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'role-manager' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'max' }],
    } as KubeObject);
    const max = as('max');
    const aggregated = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'max-aggregate' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { team: 'max' } }] },
    } as KubeObject;
    await waitFor('max to manage roles', async () => (await refusal(max.get(RESOURCES.clusterroles, 'view'))) === 'allowed');
    expect(await refusal(max.create(RESOURCES.clusterroles, aggregated))).toBe(
      'clusterroles.rbac.authorization.k8s.io "max-aggregate" is forbidden: must have cluster-admin privileges to use the aggregationRule',
    );
    await admin.create(RESOURCES.clusterroles, aggregated);
    const stored = await admin.get<KubeObject>(RESOURCES.clusterroles, 'max-aggregate');
    expect(await refusal(max.update(RESOURCES.clusterroles, { ...stored, metadata: { ...stored.metadata, labels: { owner: 'max' } } }))).toBe('allowed');
  });

  it('aggregates a new ClusterRole into view', async () => {
    await admin.create(RESOURCES.clusterroles, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'widgets-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
      rules: [{ verbs: ['get'], apiGroups: ['example.com'], resources: ['widgets'] }],
    } as KubeObject);
    await waitFor(
      'view to aggregate widgets-view',
      async () => {
        const view = await admin.get<KubeObject & { rules: { resources: string[] }[] }>(RESOURCES.clusterroles, 'view');
        return view.rules.some((rule) => rule.resources.includes('widgets'));
      },
      { timeoutMs: 5_000 },
    );
  });

  it('lists the rules for kubectl auth can-i --list', async () => {
    const review = await as('erin').create<KubeObject & { status: { resourceRules: { resources: string[] }[]; incomplete: boolean } }>(
      RESOURCES.selfsubjectrulesreviews,
      { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', metadata: {}, spec: { namespace: 'team-a' } } as never,
    );
    expect(review.status.incomplete).toBe(false);
    expect(review.status.resourceRules.some((rule) => rule.resources.includes('deployments'))).toBe(true);
  });
});

describe('SelfSubjectRulesReview without an authorizer that lists rules', () => {
  it('answers incomplete, saying why', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'skiff-rules-'));
    const kernel = new Kernel({ config: { port: 0, logLevel: 'silent', dataDir, rootDir: dataDir } }).use(store).use(apiServer, { port: 0 });
    await kernel.start();
    try {
      const client = createLoopbackClient(kernel.resolve('apiHandler'), { username: 'root', groups: ['system:masters', 'system:authenticated'] });
      const review = await client.create<KubeObject & { status: { resourceRules: unknown[]; incomplete: boolean; evaluationError?: string } }>(
        RESOURCES.selfsubjectrulesreviews,
        { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', metadata: {}, spec: { namespace: 'default' } } as never,
      );
      expect(review.status).toEqual({
        resourceRules: [],
        nonResourceRules: [],
        incomplete: true,
        evaluationError: 'no authorizer of this cluster lists its rules',
      });
    } finally {
      await kernel.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
