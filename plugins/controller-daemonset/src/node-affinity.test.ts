import { describe, expect, it } from 'vitest';
import type { Affinity } from '@skiff/api';
import { affinityForNode, podFitsNodeAffinity, targetNodeName } from './node-affinity.js';
import { nodeAffinityFilter, NODE_AFFINITY_MISMATCH } from './node-affinity-filter.js';
import { testNode } from './test-objects.js';

const required = (...terms: object[]): Affinity => ({
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms as never } },
});
const fits = (affinity: Affinity, labels: Record<string, string> = {}, name = 'n1') =>
  podFitsNodeAffinity({ containers: [], affinity }, testNode(name, { labels }));

describe('node affinity', () => {
  it('ORs terms and ANDs the requirements within a term', () => {
    const affinity = required(
      {
        matchExpressions: [
          { key: 'zone', operator: 'In', values: ['a'] },
          { key: 'gpu', operator: 'Exists' },
        ],
      },
      { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
    );
    expect(fits(affinity, { zone: 'a', gpu: '1' })).toBe(true);
    expect(fits(affinity, { zone: 'a' })).toBe(false);
    expect(fits(affinity, { zone: 'b' })).toBe(true);
  });

  it('supports NotIn, DoesNotExist, Gt and Lt', () => {
    expect(fits(required({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }), {})).toBe(true);
    expect(fits(required({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }), { zone: 'a' })).toBe(false);
    expect(fits(required({ matchExpressions: [{ key: 'spot', operator: 'DoesNotExist' }] }), { spot: '' })).toBe(false);
    expect(fits(required({ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['4'] }] }), { cores: '8' })).toBe(true);
    expect(fits(required({ matchExpressions: [{ key: 'cores', operator: 'Lt', values: ['4'] }] }), { cores: '8' })).toBe(false);
    expect(fits(required({ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['4'] }] }), { cores: 'many' })).toBe(false);
  });

  it('matches metadata.name fields; an empty term or term list matches nothing', () => {
    expect(fits(affinityForNode(undefined, 'n1'), {}, 'n1')).toBe(true);
    expect(fits(affinityForNode(undefined, 'n1'), {}, 'n2')).toBe(false);
    expect(fits(required({}))).toBe(false);
    expect(fits(required())).toBe(false);
    expect(podFitsNodeAffinity({ containers: [] }, testNode('n1'))).toBe(true);
    expect(podFitsNodeAffinity({ containers: [], nodeSelector: { a: 'b' } }, testNode('n1'))).toBe(false);
  });

  it('pins a DaemonSet pod to its node by replacing the required terms and keeping the rest', () => {
    const original: Affinity = {
      ...required({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }),
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [] },
    };
    original.nodeAffinity!.preferredDuringSchedulingIgnoredDuringExecution = [{ weight: 1, preference: {} }];
    expect(affinityForNode(original, 'n7')).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n7'] }] }] },
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: {} }],
      },
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [] },
    });
    expect(original.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms[0]!.matchExpressions).toHaveLength(1);
  });

  it('finds the node a pod belongs to: its binding, else its affinity', () => {
    expect(targetNodeName({ containers: [], nodeName: 'n2', affinity: affinityForNode(undefined, 'n1') })).toBe('n2');
    expect(targetNodeName({ containers: [], affinity: affinityForNode(undefined, 'n1') })).toBe('n1');
    expect(targetNodeName({ containers: [] })).toBeUndefined();
  });

  it('the scheduler filter rejects a node outside the affinity with kube-scheduler reason', () => {
    const pod = { metadata: { name: 'p' }, spec: { containers: [], affinity: affinityForNode(undefined, 'n1') } };
    const info = (name: string) => ({
      node: testNode(name),
      pods: [],
      requested: { milliCPU: 0, memory: 0, pods: 0 },
      allocatable: { milliCPU: 0, memory: 0, pods: 0 },
    });
    expect(nodeAffinityFilter.filter!(new Map(), pod, info('n1'))).toBeNull();
    expect(nodeAffinityFilter.filter!(new Map(), pod, info('n2'))).toEqual({ code: 'UnschedulableAndUnresolvable', reasons: [NODE_AFFINITY_MISMATCH] });
  });
});
