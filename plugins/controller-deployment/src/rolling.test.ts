import { describe, expect, it } from 'vitest';
import { maxSurge, maxUnavailable, newReplicaSetReplicas, planNewReplicaSetScale, planOldReplicaSetsScaleDown, resolveFenceposts } from './rolling.js';
import { testDeployment, testReplicaSet } from './test-objects.js';

const sizes = (steps: { rs: { metadata: { name?: string } }; replicas: number }[]) => steps.map(({ rs, replicas }) => [rs.metadata.name, replicas]);

describe('resolveFenceposts', () => {
  it('rounds a percentage surge up and a percentage unavailable down', () => {
    expect(resolveFenceposts('25%', '25%', 10)).toEqual({ surge: 3, unavailable: 2 });
    expect(resolveFenceposts('10%', '10%', 4)).toEqual({ surge: 1, unavailable: 0 });
    expect(resolveFenceposts('50%', '50%', 3)).toEqual({ surge: 2, unavailable: 1 });
  });

  it('takes integers as they are', () => {
    expect(resolveFenceposts(2, 0, 10)).toEqual({ surge: 2, unavailable: 0 });
    expect(resolveFenceposts('3', '1', 10)).toEqual({ surge: 3, unavailable: 1 });
  });

  it('allows one unavailable pod when both come out as zero, so the rollout can move', () => {
    expect(resolveFenceposts(0, 0, 5)).toEqual({ surge: 0, unavailable: 1 });
    expect(resolveFenceposts('0%', '10%', 3)).toEqual({ surge: 0, unavailable: 1 });
  });

  it('rejects values that are neither integers nor percentages', () => {
    expect(() => resolveFenceposts('lots', 1, 3)).toThrow(
      expect.objectContaining({
        code: 'SKIFF_ERR_DEPLOYMENT_INT_OR_PERCENT',
        message: 'spec.strategy.rollingUpdate.maxSurge must be an integer or a percentage such as "25%" (got "lots")',
      }),
    );
  });
});

describe('maxSurge and maxUnavailable of a Deployment', () => {
  it('default to 25% each', () => {
    expect(maxSurge(testDeployment())).toBe(3);
    expect(maxUnavailable(testDeployment())).toBe(2);
  });

  it('never let more pods be unavailable than there are replicas', () => {
    expect(maxUnavailable(testDeployment({ replicas: 2, strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 5 } } }))).toBe(2);
    expect(maxUnavailable(testDeployment({ replicas: 0 }))).toBe(0);
  });

  it('are zero for Recreate', () => {
    const recreate = testDeployment({ strategy: { type: 'Recreate' } });
    expect([maxSurge(recreate), maxUnavailable(recreate)]).toEqual([0, 0]);
  });
});

describe('new ReplicaSet size', () => {
  it('grows by the surge while the old pods are still there', () => {
    const d = testDeployment();
    const old = testReplicaSet('web-old', 10);
    const fresh = testReplicaSet('web-new', 0);
    expect(newReplicaSetReplicas(d, [old, fresh], fresh)).toBe(3);
    expect(planNewReplicaSetScale(d, [old, fresh], fresh)).toBe(3);
  });

  it('stays put when all ReplicaSets together are at replicas + surge', () => {
    const d = testDeployment();
    const old = testReplicaSet('web-old', 10);
    const fresh = testReplicaSet('web-new', 3, { available: 0 });
    expect(planNewReplicaSetScale(d, [old, fresh], fresh)).toBeUndefined();
  });

  it('never grows past replicas, and shrinks to replicas when above', () => {
    const d = testDeployment();
    const fresh = testReplicaSet('web-new', 9);
    expect(newReplicaSetReplicas(d, [fresh], fresh)).toBe(10);
    expect(planNewReplicaSetScale(d, [testReplicaSet('web-new', 12)], testReplicaSet('web-new', 12))).toBe(10);
  });

  it('is the full size for Recreate', () => {
    const d = testDeployment({ strategy: { type: 'Recreate' } });
    const fresh = testReplicaSet('web-new', 0);
    expect(newReplicaSetReplicas(d, [testReplicaSet('web-old', 10), fresh], fresh)).toBe(10);
  });
});

describe('old ReplicaSets scale-down', () => {
  it('scales old pods down only as far as maxUnavailable allows', () => {
    const d = testDeployment();
    const old = testReplicaSet('web-old', 10);
    const fresh = testReplicaSet('web-new', 3, { available: 0 });
    // 13 pods, at least 8 must stay available, 3 new ones are not available yet: 2 old pods may go.
    expect(sizes(planOldReplicaSetsScaleDown(d, [old, fresh], [old], fresh))).toEqual([['web-old', 8]]);
  });

  it('scales further once new pods become available', () => {
    const d = testDeployment();
    const old = testReplicaSet('web-old', 8);
    const fresh = testReplicaSet('web-new', 5, { available: 5 });
    expect(sizes(planOldReplicaSetsScaleDown(d, [old, fresh], [old], fresh))).toEqual([['web-old', 3]]);
  });

  it('removes unhealthy old pods first, oldest ReplicaSet first', () => {
    const d = testDeployment();
    const oldest = testReplicaSet('web-v1', 3, { available: 0, created: '2024-01-01T00:00:00Z' });
    const old = testReplicaSet('web-v2', 5, { available: 5, created: '2024-01-02T00:00:00Z' });
    const fresh = testReplicaSet('web-v3', 3, { available: 3, created: '2024-01-03T00:00:00Z' });
    // 11 pods, min available 8, new all available: up to 3 may go; v1's 3 broken pods go first,
    // then the 8 available pods are exactly the minimum, so v2 keeps all of its pods.
    expect(sizes(planOldReplicaSetsScaleDown(d, [oldest, old, fresh], [oldest, old], fresh))).toEqual([['web-v1', 0]]);
  });

  it('does nothing until new pods are available when no pod may be unavailable', () => {
    const d = testDeployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } });
    const old = testReplicaSet('web-old', 10);
    const fresh = testReplicaSet('web-new', 1, { available: 0 });
    expect(planOldReplicaSetsScaleDown(d, [old, fresh], [old], fresh)).toEqual([]);
    const ready = testReplicaSet('web-new', 1, { available: 1 });
    expect(sizes(planOldReplicaSetsScaleDown(d, [old, ready], [old], ready))).toEqual([['web-old', 9]]);
    expect(planOldReplicaSetsScaleDown(d, [fresh], [], fresh)).toEqual([]);
  });
});
