import { describe, expect, it } from 'vitest';
import { podFitsNodeAffinity, type Affinity } from '@skiff/api';
import { affinityForNode, targetNodeName } from './node-affinity.js';
import { testNode } from './test-objects.js';

const required = (...terms: object[]): Affinity => ({
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms as never } },
});
const fits = (affinity: Affinity, labels: Record<string, string> = {}, name = 'n1') =>
  podFitsNodeAffinity({ containers: [], affinity }, testNode(name, { labels }));

describe('DaemonSet pod node affinity', () => {
  it('pins a pod to its node: the node matches the pinned affinity, no other does', () => {
    expect(fits(affinityForNode(undefined, 'n1'), {}, 'n1')).toBe(true);
    expect(fits(affinityForNode(undefined, 'n1'), {}, 'n2')).toBe(false);
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
});
