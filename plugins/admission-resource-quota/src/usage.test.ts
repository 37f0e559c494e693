import type { Pod, ResourceQuota, Service } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { formatAmount, prettyPrint, amountsOf } from './amounts.js';
import { missingResources } from './constraints.js';
import { trackedKeys } from './scopes.js';
import { collectionsOfKey, usageOf } from './usage.js';

const PODS = { group: '', resource: 'pods' };

function pod(spec: Partial<Pod['spec']>, status?: Pod['status']): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [], ...spec }, ...(status ? { status } : {}) } as Pod;
}

function quota(hard: Record<string, string>, spec: Partial<ResourceQuota['spec']> = {}): ResourceQuota {
  return { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'ns' }, spec: { hard, ...spec } };
}

const show = (amounts: Map<string, number>) => Object.fromEntries([...amounts].map(([key, value]) => [key, formatAmount(key, value)]));

describe('usage of an object', () => {
  it('a pod: the larger of its containers and its largest init container, plus overhead, under every key it counts for', () => {
    const usage = usageOf(
      PODS,
      pod({
        containers: [
          { name: 'a', resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m' } } },
          { name: 'b', resources: { requests: { cpu: '0.2', 'nvidia.com/gpu': '1' } } },
        ],
        initContainers: [{ name: 'i', resources: { requests: { cpu: '500m' } } }],
        overhead: { cpu: '10m' },
      }),
    );
    expect(show(usage)).toEqual({
      'count/pods': '1',
      pods: '1',
      'requests.cpu': '510m',
      cpu: '510m',
      'requests.memory': '64Mi',
      memory: '64Mi',
      'limits.cpu': '210m',
      'requests.nvidia.com/gpu': '1',
    });
  });

  it('a finished pod keeps only its object count', () => {
    const usage = usageOf(PODS, pod({ containers: [{ name: 'a', resources: { requests: { cpu: '1' } } }] }, { phase: 'Succeeded' }));
    expect(show(usage)).toEqual({ 'count/pods': '1' });
  });

  it('services count node ports and load balancers; other kinds count under count/<resource>.<group>', () => {
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { type: 'LoadBalancer', ports: [{ port: 80 }, { port: 443 }] },
    } as Service;
    expect(show(usageOf({ group: '', resource: 'services' }, service))).toEqual({
      'count/services': '1',
      services: '1',
      'services.loadbalancers': '1',
      'services.nodeports': '2',
    });
    expect(show(usageOf({ group: 'apps', resource: 'deployments' }, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } }))).toEqual({
      'count/deployments.apps': '1',
    });
    expect(collectionsOfKey('count/deployments.apps')).toEqual([{ group: 'apps', resource: 'deployments' }]);
    expect(collectionsOfKey('gold.storageclass.storage.k8s.io/requests.storage')).toEqual([{ group: '', resource: 'persistentvolumeclaims' }]);
  });
});

describe('scopes', () => {
  const bestEffort = pod({ containers: [{ name: 'a' }] });
  const sized = pod({ containers: [{ name: 'a', resources: { requests: { cpu: '1' } } }], activeDeadlineSeconds: 30, priorityClassName: 'high' });

  it('BestEffort tracks only pods without cpu or memory, and only its pod count', () => {
    const q = quota({ pods: '1', 'requests.cpu': '1' }, { scopes: ['BestEffort'] });
    expect(trackedKeys(q, PODS, bestEffort)).toEqual(['pods']);
    expect(trackedKeys(q, PODS, sized)).toEqual([]);
    expect(trackedKeys(q, { group: '', resource: 'configmaps' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} })).toEqual([]);
  });

  it('Terminating, NotTerminating and PriorityClass selectors', () => {
    expect(trackedKeys(quota({ pods: '1' }, { scopes: ['Terminating'] }), PODS, sized)).toEqual(['pods']);
    expect(trackedKeys(quota({ pods: '1' }, { scopes: ['NotTerminating'] }), PODS, sized)).toEqual([]);
    const high = quota({ pods: '1', cpu: '2' }, { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } });
    expect(trackedKeys(high, PODS, sized)).toEqual(['pods', 'cpu']);
    expect(trackedKeys(high, PODS, bestEffort)).toEqual([]);
  });
});

describe('messages', () => {
  it('names what each container must specify, as kube-apiserver does', () => {
    const p = pod({ containers: [{ name: 'web', resources: { requests: { cpu: '1' } } }, { name: 'side' }] });
    expect(missingResources(p, ['requests.cpu', 'limits.memory', 'pods'])).toBe('must specify limits.memory for: side,web; requests.cpu for: side');
    expect(missingResources(p, ['pods'])).toBeUndefined();
  });

  it('prints resource lists sorted, in canonical quantities', () => {
    const amounts = amountsOf({ 'requests.memory': '1Gi', pods: '3', 'limits.cpu': '1500m' });
    expect(prettyPrint(amounts, ['requests.memory', 'pods', 'limits.cpu'])).toBe('limits.cpu=1500m,pods=3,requests.memory=1Gi');
  });
});
