import { describe, expect, it } from 'vitest';
import { ANNOTATION } from './names.js';
import { findActiveOrLatest, isSaturated, isScalingEvent } from './scaling.js';
import { testDeployment, testReplicaSet } from './test-objects.js';

const scaledFor = (name: string, replicas: number, desired: number, created = '2024-01-01T00:00:00Z') =>
  testReplicaSet(name, replicas, { created, annotations: { [ANNOTATION.DESIRED_REPLICAS]: String(desired) } });

describe('isScalingEvent', () => {
  it('is true when an active ReplicaSet was sized for another replica count', () => {
    expect(isScalingEvent(testDeployment({ replicas: 5 }), [scaledFor('web', 3, 3)])).toBe(true);
    expect(isScalingEvent(testDeployment({ replicas: 3 }), [scaledFor('web', 3, 3)])).toBe(false);
  });

  it('ignores scaled-down ReplicaSets and ones without the annotation', () => {
    expect(isScalingEvent(testDeployment({ replicas: 5 }), [scaledFor('web-old', 0, 3), testReplicaSet('web', 2), undefined])).toBe(false);
  });
});

describe('findActiveOrLatest', () => {
  it('picks the only active ReplicaSet', () => {
    const old = testReplicaSet('web-old', 0);
    const fresh = testReplicaSet('web-new', 3);
    expect(findActiveOrLatest(fresh, [old])).toBe(fresh);
    expect(findActiveOrLatest(undefined, [old, testReplicaSet('web-mid', 2)])?.metadata.name).toBe('web-mid');
  });

  it('picks the new one, or else the newest old one, when none is active', () => {
    const older = testReplicaSet('web-1', 0, { created: '2024-01-01T00:00:00Z' });
    const newer = testReplicaSet('web-2', 0, { created: '2024-01-02T00:00:00Z' });
    expect(findActiveOrLatest(undefined, [newer, older])).toBe(newer);
    const fresh = testReplicaSet('web-3', 0);
    expect(findActiveOrLatest(fresh, [older])).toBe(fresh);
  });

  it('gives up during a rollout (several active)', () => {
    expect(findActiveOrLatest(testReplicaSet('a', 1), [testReplicaSet('b', 1)])).toBeUndefined();
  });
});

describe('isSaturated', () => {
  it('needs the right size, the right desired annotation and every pod available', () => {
    const d = testDeployment({ replicas: 3 });
    expect(isSaturated(d, scaledFor('web', 3, 3))).toBe(true);
    expect(isSaturated(d, scaledFor('web', 3, 2))).toBe(false);
    expect(isSaturated(d, testReplicaSet('web', 3, { available: 2, annotations: { [ANNOTATION.DESIRED_REPLICAS]: '3' } }))).toBe(false);
    expect(isSaturated(d, undefined)).toBe(false);
  });
});
