import { describe, expect, it } from 'vitest';
import { getCondition } from './conditions.js';
import { CONDITION, REASON } from './names.js';
import { calculateStatus, deploymentComplete, progressCheckDelay, rolloutStatus, sameStatus } from './status.js';
import { testDeployment, testReplicaSet } from './test-objects.js';

const NOW = Date.parse('2024-01-01T01:00:00Z');
const T0 = '2024-01-01T00:00:00Z';

describe('calculateStatus', () => {
  it('adds up the ReplicaSets: pods, updated pods (the new ReplicaSet), ready, available and unavailable', () => {
    const d = testDeployment({}, undefined, 4);
    const old = testReplicaSet('web-old', 8, { available: 8 });
    const fresh = testReplicaSet('web-new', 5, { actual: 5, ready: 3, available: 2 });
    const status = calculateStatus(d, [old, fresh], fresh, NOW);
    expect(status).toMatchObject({ observedGeneration: 4, replicas: 13, updatedReplicas: 5, readyReplicas: 11, availableReplicas: 10, unavailableReplicas: 3 });
  });

  it('is Available while at least replicas - maxUnavailable pods are available', () => {
    const d = testDeployment();
    expect(getCondition(calculateStatus(d, [testReplicaSet('web', 10, { available: 8 })], undefined, NOW), CONDITION.AVAILABLE)).toEqual({
      type: 'Available',
      status: 'True',
      reason: REASON.MIN_REPLICAS_AVAILABLE,
      message: 'Deployment has minimum availability.',
      lastUpdateTime: '2024-01-01T01:00:00Z',
      lastTransitionTime: '2024-01-01T01:00:00Z',
    });
    const short = calculateStatus(d, [testReplicaSet('web', 10, { available: 7 })], undefined, NOW);
    expect(getCondition(short, CONDITION.AVAILABLE)).toMatchObject({
      status: 'False',
      reason: REASON.MIN_REPLICAS_UNAVAILABLE,
      message: 'Deployment does not have minimum availability.',
    });
  });

  it('leaves an unchanged condition exactly as it was', () => {
    const available = {
      type: 'Available',
      status: 'True' as const,
      reason: REASON.MIN_REPLICAS_AVAILABLE,
      message: 'Deployment has minimum availability.',
      lastUpdateTime: T0,
      lastTransitionTime: T0,
    };
    const d = testDeployment({}, { conditions: [available] });
    expect(getCondition(calculateStatus(d, [testReplicaSet('web', 10)], undefined, NOW), CONDITION.AVAILABLE)).toEqual(available);
  });

  it('leaves zero counts out', () => {
    expect(calculateStatus(testDeployment({ replicas: 0 }), [], undefined, NOW)).toEqual({
      observedGeneration: 1,
      conditions: [expect.objectContaining({ type: 'Available', status: 'True' })],
    });
  });
});

describe('rolloutStatus', () => {
  const progressing = (reason: string, status: 'True' | 'False' = 'True', at = T0) => ({
    type: 'Progressing',
    status,
    reason,
    message: 'm',
    lastUpdateTime: at,
    lastTransitionTime: at,
  });

  it('says NewReplicaSetAvailable once every pod is updated and available: what rollout status waits for', () => {
    const d = testDeployment({}, { observedGeneration: 1, conditions: [progressing(REASON.RS_UPDATED)] });
    const fresh = testReplicaSet('web-abc', 10);
    const status = rolloutStatus(d, [fresh], fresh, NOW);
    expect(getCondition(status, CONDITION.PROGRESSING)).toMatchObject({
      status: 'True',
      reason: REASON.NEW_RS_AVAILABLE,
      message: 'ReplicaSet "web-abc" has successfully progressed.',
      lastTransitionTime: T0,
    });
    expect(deploymentComplete(d, status)).toBe(true);
    expect(status).toMatchObject({ replicas: 10, updatedReplicas: 10, availableReplicas: 10 });
  });

  it('refreshes lastUpdateTime (but not lastTransitionTime) of ReplicaSetUpdated when progress is seen', () => {
    const d = testDeployment({}, { replicas: 10, updatedReplicas: 0, availableReplicas: 10, conditions: [progressing(REASON.NEW_RS_CREATED)] });
    const old = testReplicaSet('web-old', 10);
    const fresh = testReplicaSet('web-new', 3, { available: 0 });
    expect(getCondition(rolloutStatus(d, [old, fresh], fresh, NOW), CONDITION.PROGRESSING)).toEqual({
      type: 'Progressing',
      status: 'True',
      reason: REASON.RS_UPDATED,
      message: 'ReplicaSet "web-new" is progressing.',
      lastUpdateTime: '2024-01-01T01:00:00Z',
      lastTransitionTime: T0,
    });
  });

  it('reports ProgressDeadlineExceeded after progressDeadlineSeconds without progress', () => {
    const before = { replicas: 13, updatedReplicas: 3, availableReplicas: 10, readyReplicas: 10 };
    const d = testDeployment({ progressDeadlineSeconds: 600 }, { ...before, conditions: [progressing(REASON.RS_UPDATED)] });
    const old = testReplicaSet('web-old', 10);
    const stuck = testReplicaSet('web-new', 3, { available: 0, ready: 0 });
    const status = rolloutStatus(d, [old, stuck], stuck, NOW);
    expect(getCondition(status, CONDITION.PROGRESSING)).toMatchObject({
      status: 'False',
      reason: REASON.TIMED_OUT,
      message: 'ReplicaSet "web-new" has timed out progressing.',
    });
    const early = rolloutStatus(d, [old, stuck], stuck, Date.parse(T0) + 599_000);
    expect(getCondition(early, CONDITION.PROGRESSING)?.reason).toBe(REASON.RS_UPDATED);
  });

  it('drops Progressing when the Deployment has no progress deadline', () => {
    const d = testDeployment({ progressDeadlineSeconds: 2 ** 31 - 1 }, { conditions: [progressing(REASON.RS_UPDATED)] });
    expect(getCondition(rolloutStatus(d, [testReplicaSet('web', 10)], undefined, NOW), CONDITION.PROGRESSING)).toBeUndefined();
  });

  it('carries a ReplicaFailure of the new ReplicaSet over to the Deployment', () => {
    const failing = testReplicaSet('web-new', 3, { available: 0, actual: 0 });
    failing.status!.conditions = [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'quota', lastTransitionTime: T0 }];
    const status = rolloutStatus(testDeployment(), [failing], failing, NOW);
    expect(getCondition(status, CONDITION.REPLICA_FAILURE)).toEqual({
      type: 'ReplicaFailure',
      status: 'True',
      reason: 'FailedCreate',
      message: 'quota',
      lastTransitionTime: T0,
      lastUpdateTime: T0,
    });
  });
});

describe('progressCheckDelay', () => {
  it('is the time left before the progress deadline of a rollout still under way', () => {
    const d = testDeployment(
      { progressDeadlineSeconds: 600 },
      { conditions: [{ type: 'Progressing', status: 'True', reason: REASON.RS_UPDATED, lastUpdateTime: '2024-01-01T00:55:00Z' }] },
    );
    expect(progressCheckDelay(d, { replicas: 10, updatedReplicas: 3 }, NOW)).toBe(300_000);
  });

  it('is undefined for a complete rollout or one already timed out', () => {
    const done = testDeployment({}, { conditions: [{ type: 'Progressing', status: 'True', reason: REASON.NEW_RS_AVAILABLE, lastUpdateTime: T0 }] });
    expect(progressCheckDelay(done, { observedGeneration: 1, replicas: 10, updatedReplicas: 10, availableReplicas: 10 }, NOW)).toBeUndefined();
    const timedOut = testDeployment({}, { conditions: [{ type: 'Progressing', status: 'False', reason: REASON.TIMED_OUT, lastUpdateTime: T0 }] });
    expect(progressCheckDelay(timedOut, { replicas: 10 }, NOW)).toBeUndefined();
  });
});

describe('sameStatus', () => {
  it('ignores zero counts and key order', () => {
    expect(sameStatus({ replicas: 0, availableReplicas: 3 }, { availableReplicas: 3 })).toBe(true);
    expect(sameStatus({ conditions: [{ type: 'A', status: 'True', reason: 'r' }] }, { conditions: [{ reason: 'r', status: 'True', type: 'A' }] })).toBe(true);
    expect(sameStatus({ availableReplicas: 3 }, { availableReplicas: 4 })).toBe(false);
  });
});
