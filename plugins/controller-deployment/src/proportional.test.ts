import { describe, expect, it } from 'vitest';
import { ANNOTATION } from './names.js';
import { proportionalScale } from './proportional.js';
import { testDeployment, testReplicaSet } from './test-objects.js';

const sized = (name: string, replicas: number, maxReplicas: number, created: string) =>
  testReplicaSet(name, replicas, { created, annotations: { [ANNOTATION.MAX_REPLICAS]: String(maxReplicas) } });
const sizes = (steps: { rs: { metadata: { name?: string } }; replicas: number }[]) =>
  Object.fromEntries(steps.map(({ rs, replicas }) => [rs.metadata.name, replicas]));

describe('proportionalScale', () => {
  it('spreads a scale-up over the active ReplicaSets in proportion to their sizes', () => {
    // Mid-rollout at 10 replicas (max 13), resized to 20 (max 25): 12 more pods to place.
    const d = testDeployment({ replicas: 20 });
    const old = sized('web-old', 8, 13, '2024-01-01T00:00:00Z');
    const fresh = sized('web-new', 5, 13, '2024-01-02T00:00:00Z');
    expect(sizes(proportionalScale(d, [old, fresh]))).toEqual({ 'web-old': 15, 'web-new': 10 });
  });

  it('spreads a scale-down the same way', () => {
    const d = testDeployment({ replicas: 10 });
    const old = sized('web-old', 15, 25, '2024-01-01T00:00:00Z');
    const fresh = sized('web-new', 10, 25, '2024-01-02T00:00:00Z');
    expect(sizes(proportionalScale(d, [old, fresh]))).toEqual({ 'web-old': 8, 'web-new': 5 });
  });

  it('gives rounding leftovers to the largest ReplicaSet', () => {
    const d = testDeployment({ replicas: 4, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } } });
    const a = sized('web-a', 1, 3, '2024-01-01T00:00:00Z');
    const b = sized('web-b', 1, 3, '2024-01-02T00:00:00Z');
    const c = sized('web-c', 1, 3, '2024-01-03T00:00:00Z');
    // Each third of 4 rounds to 1; the one pod left over goes to the first in order (equal sizes: newest first).
    expect(sizes(proportionalScale(d, [a, b, c]))).toEqual({ 'web-a': 1, 'web-b': 1, 'web-c': 2 });
  });

  it('scales everything to zero when the Deployment is scaled to zero', () => {
    const d = testDeployment({ replicas: 0 });
    expect(sizes(proportionalScale(d, [sized('web-old', 4, 13, '2024-01-01T00:00:00Z'), sized('web-new', 6, 13, '2024-01-02T00:00:00Z')]))).toEqual({
      'web-old': 0,
      'web-new': 0,
    });
  });

  it('reports every active ReplicaSet, so unchanged ones still get fresh annotations', () => {
    const d = testDeployment({ replicas: 10 });
    const steps = proportionalScale(d, [sized('web-old', 5, 13, '2024-01-01T00:00:00Z'), sized('web-new', 5, 13, '2024-01-02T00:00:00Z')]);
    expect(steps).toHaveLength(2);
  });

  it('does nothing for Recreate or when the sizes already add up', () => {
    expect(proportionalScale(testDeployment({ strategy: { type: 'Recreate' } }), [testReplicaSet('a', 5), testReplicaSet('b', 5)])).toEqual([]);
    expect(proportionalScale(testDeployment(), [testReplicaSet('a', 8), testReplicaSet('b', 5)])).toEqual([]);
  });
});
