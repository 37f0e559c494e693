import type { KubeObject, MatchResources } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { matchResources, ruleMatches, type MatchAttributes, type MatchContext } from './matching.js';

const deployment = (labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team-a', labels },
});

function attributes(overrides: Partial<MatchAttributes> = {}): MatchAttributes {
  return {
    operation: 'CREATE',
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    subresource: '',
    namespace: 'team-a',
    name: 'web',
    object: deployment({ app: 'web' }),
    ...overrides,
  };
}

const NAMESPACE_LABELS: Record<string, Record<string, string>> = { 'team-a': { env: 'prod' }, 'team-b': { env: 'dev' } };

const context: MatchContext = {
  async namespaceLabels(name) {
    const labels = NAMESPACE_LABELS[name];
    if (!labels) throw new Error(`namespaces "${name}" not found`);
    return labels;
  },
  equivalents: (resource) =>
    resource.group === 'apps' && resource.resource === 'deployments'
      ? [{ resource: { ...resource, version: 'v1beta2' }, kind: { group: 'apps', version: 'v1beta2', kind: 'Deployment' } }]
      : [],
};

const deployments = { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] };

describe('resource rules', () => {
  it('match on operation, group, version and resource, "*" standing for any', () => {
    expect(ruleMatches(deployments, attributes())).toBe(true);
    expect(ruleMatches(deployments, attributes({ operation: 'DELETE' }))).toBe(false);
    expect(ruleMatches({ ...deployments, apiGroups: [''] }, attributes())).toBe(false);
    expect(ruleMatches({ ...deployments, apiVersions: ['v2'] }, attributes())).toBe(false);
    expect(ruleMatches({ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'] }, attributes({ operation: 'DELETE' }))).toBe(true);
  });

  it('tell resources from subresources: "*" takes no subresource, "pods/*" and "*/*" do, "*/scale" only scale', () => {
    const scale = attributes({ subresource: 'scale' });
    const rule = (resources: string[]) => ({ ...deployments, resources });
    expect(ruleMatches(rule(['*']), scale)).toBe(false);
    expect(ruleMatches(rule(['deployments']), scale)).toBe(false);
    expect(ruleMatches(rule(['deployments/*']), scale)).toBe(true);
    expect(ruleMatches(rule(['deployments/*']), attributes())).toBe(true);
    expect(ruleMatches(rule(['*/scale']), scale)).toBe(true);
    expect(ruleMatches(rule(['*/scale']), attributes({ subresource: 'status' }))).toBe(false);
    expect(ruleMatches(rule(['*/*']), scale)).toBe(true);
  });

  it('honour scope (a Namespace is cluster-scoped) and resourceNames', () => {
    expect(ruleMatches({ ...deployments, scope: 'Namespaced' }, attributes())).toBe(true);
    expect(ruleMatches({ ...deployments, scope: 'Cluster' }, attributes())).toBe(false);
    const namespace = attributes({ resource: { group: '', version: 'v1', resource: 'namespaces' }, namespace: 'team-a', name: 'team-a' });
    const namespaces = { apiGroups: [''], apiVersions: ['v1'], operations: ['*'], resources: ['namespaces'] };
    expect(ruleMatches({ ...namespaces, scope: 'Cluster' }, namespace)).toBe(true);
    expect(ruleMatches({ ...namespaces, scope: 'Namespaced' }, namespace)).toBe(false);
    expect(ruleMatches({ ...deployments, resourceNames: ['web'] }, attributes())).toBe(true);
    expect(ruleMatches({ ...deployments, resourceNames: ['api'] }, attributes())).toBe(false);
  });
});

describe('matchResources', () => {
  const criteria = (extra: Partial<MatchResources> = {}): MatchResources => ({ resourceRules: [deployments], matchPolicy: 'Equivalent', ...extra });

  it('lets excludeResourceRules win over resourceRules', async () => {
    expect((await matchResources(criteria(), attributes(), context)).matches).toBe(true);
    expect((await matchResources(criteria({ excludeResourceRules: [{ ...deployments, resourceNames: ['web'] }] }), attributes(), context)).matches).toBe(false);
  });

  it('selects every resource when it has no rules, and everything when it is absent', async () => {
    expect((await matchResources({}, attributes(), context)).matches).toBe(true);
    expect((await matchResources(undefined, attributes(), context)).matches).toBe(true);
  });

  it('selects namespaced objects by their namespace labels, and never leaves a cluster-scoped one out', async () => {
    const prod = criteria({ namespaceSelector: { matchLabels: { env: 'prod' } } });
    expect((await matchResources(prod, attributes(), context)).matches).toBe(true);
    expect((await matchResources(prod, attributes({ namespace: 'team-b' }), context)).matches).toBe(false);
    const clusterRole = attributes({ resource: { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' }, namespace: '' });
    expect((await matchResources({ namespaceSelector: { matchLabels: { env: 'prod' } } }, clusterRole, context)).matches).toBe(true);
    await expect(matchResources(prod, attributes({ namespace: 'nowhere' }), context)).rejects.toThrow('namespaces "nowhere" not found');
  });

  it('matches a Namespace being written by its own labels', async () => {
    const namespace = attributes({
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      namespace: '',
      name: 'new',
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'new', labels: { env: 'prod' } } },
    });
    const prod = { namespaceSelector: { matchLabels: { env: 'prod' } } };
    expect((await matchResources(prod, namespace, context)).matches).toBe(true);
    expect((await matchResources(prod, { ...namespace, object: { ...namespace.object!, metadata: { name: 'new' } } }, context)).matches).toBe(false);
  });

  it('selects objects by their labels, new or old', async () => {
    const web = criteria({
      resourceRules: [{ ...deployments, operations: ['*'] }],
      objectSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
    });
    expect((await matchResources(web, attributes(), context)).matches).toBe(true);
    expect((await matchResources(web, attributes({ object: deployment({ app: 'api' }) }), context)).matches).toBe(false);
    expect((await matchResources(web, attributes({ operation: 'DELETE', object: undefined, oldObject: deployment({ app: 'web' }) }), context)).matches).toBe(
      true,
    );
  });

  it('with matchPolicy Equivalent, matches a rule for another served version and says which', async () => {
    const beta = { ...deployments, apiVersions: ['v1beta2'] };
    const equivalent = await matchResources(criteria({ resourceRules: [beta] }), attributes(), context);
    expect(equivalent).toEqual({
      matches: true,
      resource: { group: 'apps', version: 'v1beta2', resource: 'deployments' },
      kind: { group: 'apps', version: 'v1beta2', kind: 'Deployment' },
    });
    expect((await matchResources(criteria({ resourceRules: [beta], matchPolicy: 'Exact' }), attributes(), context)).matches).toBe(false);
  });
});
