import { describe, expect, it } from 'vitest';
import type { KubeObject, RuleWithOperations } from '@skiff/api';
import { compileMatcher, matchWebhook, resourcePatternMatches, ruleMatches, type MatchAttributes, type MatchContext } from './matching.js';

const pod = (labels?: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'team-a', labels } });

const attributes = (overrides: Partial<MatchAttributes> = {}): MatchAttributes => ({
  operation: 'CREATE',
  resource: { group: '', version: 'v1', resource: 'pods' },
  kind: { group: '', version: 'v1', kind: 'Pod' },
  subresource: '',
  namespace: 'team-a',
  name: 'web',
  object: pod(),
  ...overrides,
});

const namespaces: Record<string, Record<string, string>> = { 'team-a': { env: 'prod' }, 'team-b': { env: 'dev' } };
const context: MatchContext = {
  namespaceLabels: async (name) => namespaces[name],
  equivalents: (resource) =>
    resource.group === 'example.com' && resource.resource === 'widgets'
      ? [{ resource: { group: 'example.com', version: 'v1beta1', resource: 'widgets' }, kind: { group: 'example.com', version: 'v1beta1', kind: 'Widget' } }]
      : [],
};

const podRule: RuleWithOperations = { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] };

describe('resource patterns', () => {
  it.each([
    ['pods', 'pods', '', true],
    ['pods', 'pods', 'status', false],
    ['pods/status', 'pods', 'status', true],
    ['pods/status', 'pods', 'log', false],
    ['pods/*', 'pods', 'status', true],
    // As kube-apiserver's matcher has it, `/*` also covers the resource itself.
    ['pods/*', 'pods', '', true],
    ['*', 'deployments', '', true],
    ['*', 'deployments', 'scale', false],
    ['*/scale', 'deployments', 'scale', true],
    ['*/scale', 'deployments', '', false],
    ['*/*', 'pods', 'exec', true],
    ['*/*', 'pods', '', true],
  ])('%s against %s/%s: %s', (pattern, resource, subresource, expected) => {
    expect(resourcePatternMatches(pattern, resource, subresource)).toBe(expected);
  });
});

describe('rules', () => {
  it('match on operation, group, version and resource, with * for any', () => {
    expect(ruleMatches(podRule, attributes())).toBe(true);
    expect(ruleMatches(podRule, attributes({ operation: 'UPDATE' }))).toBe(false);
    expect(ruleMatches({ ...podRule, operations: ['*'] }, attributes({ operation: 'DELETE' }))).toBe(true);
    expect(ruleMatches({ ...podRule, apiGroups: ['apps'] }, attributes())).toBe(false);
    expect(ruleMatches({ ...podRule, apiVersions: ['v2'] }, attributes())).toBe(false);
    expect(ruleMatches({ ...podRule, apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }, attributes())).toBe(true);
    expect(ruleMatches({ ...podRule, resources: ['services'] }, attributes())).toBe(false);
  });

  it('match scope: Namespaced, Cluster (Namespace objects are cluster-scoped), *', () => {
    const namespaced = { ...podRule, operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Namespaced' };
    const cluster = { ...namespaced, scope: 'Cluster' };
    const node = attributes({ resource: { group: '', version: 'v1', resource: 'nodes' }, namespace: '' });
    const namespace = attributes({ resource: { group: '', version: 'v1', resource: 'namespaces' }, namespace: 'team-a', name: 'team-a' });
    expect(ruleMatches(namespaced, attributes())).toBe(true);
    expect(ruleMatches(cluster, attributes())).toBe(false);
    expect(ruleMatches(namespaced, node)).toBe(false);
    expect(ruleMatches(cluster, node)).toBe(true);
    expect(ruleMatches(cluster, namespace)).toBe(true);
    expect(ruleMatches(namespaced, namespace)).toBe(false);
    expect(ruleMatches({ ...namespaced, scope: '*' }, node)).toBe(true);
  });
});

describe('a webhook', () => {
  it('with no rules matches nothing', async () => {
    expect(await matchWebhook(compileMatcher({}), attributes(), context)).toEqual({ matches: false });
  });

  it('matches the request as itself', async () => {
    expect(await matchWebhook(compileMatcher({ rules: [podRule] }), attributes(), context)).toEqual({
      matches: true,
      resource: { group: '', version: 'v1', resource: 'pods' },
      kind: { group: '', version: 'v1', kind: 'Pod' },
    });
  });

  it('with matchPolicy Equivalent (the default) matches another served version; Exact does not', async () => {
    const widget = attributes({
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
    });
    const rules = [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1beta1'], resources: ['widgets'] }];
    expect(await matchWebhook(compileMatcher({ rules }), widget, context)).toEqual({
      matches: true,
      resource: { group: 'example.com', version: 'v1beta1', resource: 'widgets' },
      kind: { group: 'example.com', version: 'v1beta1', kind: 'Widget' },
    });
    expect(await matchWebhook(compileMatcher({ rules, matchPolicy: 'Exact' }), widget, context)).toEqual({ matches: false });
  });

  it('is left out by its namespaceSelector', async () => {
    const matcher = compileMatcher({ rules: [podRule], namespaceSelector: { matchLabels: { env: 'prod' } } });
    expect((await matchWebhook(matcher, attributes(), context)).matches).toBe(true);
    expect((await matchWebhook(matcher, attributes({ namespace: 'team-b' }), context)).matches).toBe(false);
    expect((await matchWebhook(matcher, attributes({ namespace: 'gone' }), context)).matches).toBe(false);
  });

  it('namespaceSelector: a cluster-scoped object is never left out; a Namespace is matched by its own labels', async () => {
    const any = [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }];
    const matcher = compileMatcher({ rules: any, namespaceSelector: { matchLabels: { env: 'prod' } } });
    const node = attributes({ resource: { group: '', version: 'v1', resource: 'nodes' }, namespace: '' });
    expect((await matchWebhook(matcher, node, context)).matches).toBe(true);
    const newNamespace = (labels: Record<string, string>) =>
      attributes({
        resource: { group: '', version: 'v1', resource: 'namespaces' },
        namespace: '',
        name: 'new',
        object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'new', labels } },
      });
    expect((await matchWebhook(matcher, newNamespace({ env: 'prod' }), context)).matches).toBe(true);
    expect((await matchWebhook(matcher, newNamespace({ env: 'dev' }), context)).matches).toBe(false);
    const deleteNamespace = attributes({
      operation: 'DELETE',
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      namespace: '',
      name: 'team-a',
      object: undefined,
    });
    expect((await matchWebhook(matcher, deleteNamespace, context)).matches).toBe(true);
  });

  it('is left out by its objectSelector, which looks at the new and the old object', async () => {
    const matcher = compileMatcher({
      rules: [{ ...podRule, operations: ['*'] }],
      objectSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
    });
    expect((await matchWebhook(matcher, attributes({ object: pod({ app: 'web' }) }), context)).matches).toBe(true);
    expect((await matchWebhook(matcher, attributes({ object: pod({ app: 'db' }) }), context)).matches).toBe(false);
    expect((await matchWebhook(matcher, attributes({ operation: 'DELETE', object: undefined, oldObject: pod({ app: 'web' }) }), context)).matches).toBe(true);
    expect((await matchWebhook(matcher, attributes({ operation: 'UPDATE', object: pod({}), oldObject: pod({ app: 'web' }) }), context)).matches).toBe(true);
  });
});
