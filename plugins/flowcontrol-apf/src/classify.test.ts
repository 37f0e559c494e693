import type { FlowSchema } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { MANDATORY_FLOW_SCHEMAS, SUGGESTED_FLOW_SCHEMAS } from './bootstrap.js';
import { classify, inMatchingOrder, matchesSubject } from './classify.js';
import { flowRequest, serviceAccount, type RequestShape } from './test-support.js';

const bootstrap = inMatchingOrder([...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS]);
const schemaOf = (shape: RequestShape) => classify(bootstrap, flowRequest(shape))?.flowSchema.metadata.name;

describe('classification by the bootstrap FlowSchemas', () => {
  it.each<[string, RequestShape, string]>([
    [
      'system:masters, anything',
      { user: 'admin', groups: ['system:masters', 'system:authenticated'], verb: 'delete', resource: 'pods', namespace: 'x' },
      'exempt',
    ],
    ['anonymous health check', { user: 'system:anonymous', groups: ['system:unauthenticated'], path: '/readyz' }, 'probes'],
    ['anonymous other path', { user: 'system:anonymous', groups: ['system:unauthenticated'], path: '/version' }, 'global-default'],
    ['a POST to /healthz is no probe', { verb: 'post', path: '/healthz' }, 'global-default'],
    [
      'a node updating its status',
      { user: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'], verb: 'patch', resource: 'nodes', subresource: 'status', name: 'n1' },
      'system-node-high',
    ],
    [
      'a node renewing its lease',
      {
        user: 'system:node:n1',
        groups: ['system:nodes'],
        verb: 'update',
        apiGroup: 'coordination.k8s.io',
        resource: 'leases',
        namespace: 'kube-node-lease',
        name: 'n1',
      },
      'system-node-high',
    ],
    ['a node reading pods', { user: 'system:node:n1', groups: ['system:nodes'], verb: 'list', resource: 'pods' }, 'system-nodes'],
    [
      'the controller manager renewing its lease',
      { user: 'system:kube-controller-manager', verb: 'update', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-system' },
      'system-leader-election',
    ],
    [
      'the controller manager writing endpoints',
      { user: 'system:kube-controller-manager', verb: 'update', resource: 'endpoints', namespace: 'default' },
      'endpoint-controller',
    ],
    [
      'the controller manager deleting endpoints',
      { user: 'system:kube-controller-manager', verb: 'delete', resource: 'endpoints', namespace: 'default' },
      'kube-controller-manager',
    ],
    [
      'the scheduler binding a pod',
      { user: 'system:kube-scheduler', verb: 'create', resource: 'pods', subresource: 'binding', namespace: 'default' },
      'kube-scheduler',
    ],
    [
      'a kube-system service account reading a config map',
      { ...serviceAccount('kube-system', 'coredns'), verb: 'get', resource: 'configmaps', namespace: 'kube-system' },
      'workload-leader-election',
    ],
    [
      'a kube-system service account listing pods',
      { ...serviceAccount('kube-system', 'coredns'), verb: 'list', resource: 'pods' },
      'kube-system-service-accounts',
    ],
    ['another service account', { ...serviceAccount('team', 'builder'), verb: 'list', resource: 'pods', namespace: 'team' }, 'service-accounts'],
    ['a user with a token', { user: 'alice', verb: 'get', resource: 'configmaps', namespace: 'default' }, 'global-default'],
    ['a user in no group at all', { user: 'nobody', groups: [], verb: 'get', resource: 'configmaps', namespace: 'default' }, undefined!],
  ])('%s → %s', (_what, shape, expected) => {
    expect(schemaOf(shape)).toBe(expected);
  });

  it('orders by matchingPrecedence, then by name', () => {
    const schema = (name: string, matchingPrecedence: number) => ({
      ...MANDATORY_FLOW_SCHEMAS[1]!,
      metadata: { name },
      spec: { ...MANDATORY_FLOW_SCHEMAS[1]!.spec, matchingPrecedence },
    });
    expect(inMatchingOrder([schema('b', 500), schema('c', 100), schema('a', 500)]).map((fs) => fs.metadata.name)).toEqual(['c', 'a', 'b']);
  });

  it('distinguishes flows by user or by namespace as the schema says, or not at all', () => {
    expect(classify(bootstrap, flowRequest({ user: 'alice', resource: 'pods', namespace: 'a' }))?.distinguisher).toBe('alice');
    expect(classify(bootstrap, flowRequest({ user: 'system:kube-scheduler', resource: 'pods', namespace: 'web' }))?.distinguisher).toBe('web');
    expect(classify(bootstrap, flowRequest({ groups: ['system:masters'], resource: 'pods', namespace: 'web' }))?.distinguisher).toBe('');
  });
});

describe('rules', () => {
  const only = (rules: FlowSchema['spec']['rules']): FlowSchema[] => [
    {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'test' },
      spec: { priorityLevelConfiguration: { name: 'x' }, rules },
    },
  ];
  const matches = (rules: FlowSchema['spec']['rules'], shape: RequestShape) => classify(only(rules), flowRequest(shape)) !== undefined;
  const everyone = [{ kind: 'Group', group: { name: '*' } }];

  it('matches a resource rule by verb, group, resource/subresource and namespace; cluster-wide requests need clusterScope', () => {
    const rules = [
      { subjects: everyone, resourceRules: [{ verbs: ['get', 'list'], apiGroups: ['apps'], resources: ['deployments/scale'], namespaces: ['web'] }] },
    ];
    expect(matches(rules, { verb: 'get', apiGroup: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'web' })).toBe(true);
    expect(matches(rules, { verb: 'get', apiGroup: 'apps', resource: 'deployments', namespace: 'web' })).toBe(false);
    expect(matches(rules, { verb: 'update', apiGroup: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'web' })).toBe(false);
    expect(matches(rules, { verb: 'get', apiGroup: '', resource: 'deployments', subresource: 'scale', namespace: 'web' })).toBe(false);
    expect(matches(rules, { verb: 'get', apiGroup: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'db' })).toBe(false);
    expect(matches(rules, { verb: 'get', apiGroup: 'apps', resource: 'deployments', subresource: 'scale' })).toBe(false);
    const clusterWide = [{ subjects: everyone, resourceRules: [{ verbs: ['list'], apiGroups: [''], resources: ['pods'], clusterScope: true }] }];
    expect(matches(clusterWide, { verb: 'list', resource: 'pods' })).toBe(true);
    expect(matches(clusterWide, { verb: 'list', resource: 'pods', namespace: 'web' })).toBe(false);
  });

  it('matches non-resource URLs exactly, by a prefix ending in /*, or all with *', () => {
    const rules = [{ subjects: everyone, nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/metrics', '/debug/*'] }] }];
    expect(matches(rules, { path: '/metrics' })).toBe(true);
    expect(matches(rules, { path: '/metrics/cadvisor' })).toBe(false);
    expect(matches(rules, { path: '/debug/' })).toBe(true);
    expect(matches(rules, { path: '/debug/pprof/heap' })).toBe(true);
    expect(matches(rules, { path: '/debug' })).toBe(false);
    expect(matches(rules, { path: '/metrics', verb: 'post' })).toBe(false);
    expect(matches(rules, { path: '/metrics', resource: 'pods' })).toBe(false);
    expect(matches([{ subjects: everyone, nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }], { path: '/anything', verb: 'put' })).toBe(true);
  });

  it('matches users, groups and service accounts, with * for any name', () => {
    expect(matchesSubject({ kind: 'User', user: { name: 'alice' } }, 'alice', [])).toBe(true);
    expect(matchesSubject({ kind: 'User', user: { name: 'alice' } }, 'bob', [])).toBe(false);
    expect(matchesSubject({ kind: 'User', user: { name: '*' } }, 'bob', [])).toBe(true);
    expect(matchesSubject({ kind: 'Group', group: { name: 'devs' } }, 'bob', ['devs'])).toBe(true);
    expect(matchesSubject({ kind: 'Group', group: { name: 'devs' } }, 'bob', ['ops'])).toBe(false);
    const builder = { kind: 'ServiceAccount', serviceAccount: { namespace: 'ci', name: 'builder' } };
    expect(matchesSubject(builder, 'system:serviceaccount:ci:builder', [])).toBe(true);
    expect(matchesSubject(builder, 'system:serviceaccount:ci:other', [])).toBe(false);
    expect(matchesSubject(builder, 'system:serviceaccount:prod:builder', [])).toBe(false);
    expect(matchesSubject(builder, 'builder', [])).toBe(false);
    const anyInCi = { kind: 'ServiceAccount', serviceAccount: { namespace: 'ci', name: '*' } };
    expect(matchesSubject(anyInCi, 'system:serviceaccount:ci:whoever', [])).toBe(true);
    expect(matchesSubject(anyInCi, 'system:serviceaccount:cd:whoever', [])).toBe(false);
  });
});
