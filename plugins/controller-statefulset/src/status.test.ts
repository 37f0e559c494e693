import { describe, expect, it } from 'vitest';
import { calculateStatus, statusChanged } from './status.js';
import { member, NOW, testSet } from './test-objects.js';

describe('StatefulSet status', () => {
  it('counts created, ready, available, current and updated pods', () => {
    const set = testSet({ minReadySeconds: 30 });
    set.metadata.generation = 4;
    const status = calculateStatus({
      set,
      pods: [
        member(set, 0, 'ready', 'web-1', '2024-05-01T11:00:00Z'),
        member(set, 1, 'ready', 'web-2', new Date(NOW - 10_000).toISOString()),
        member(set, 2, 'terminating', 'web-1'),
      ],
      currentRevision: 'web-1',
      updateRevision: 'web-2',
      collisionCount: 0,
      rolled: 0,
      now: NOW,
    });
    expect(status).toEqual({
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 2,
      currentReplicas: 1,
      updatedReplicas: 1,
      currentRevision: 'web-1',
      updateRevision: 'web-2',
      observedGeneration: 4,
      collisionCount: 0,
    });
  });

  it('completes a rolling update once every replica is updated and ready', () => {
    const set = testSet({ replicas: 2 });
    const input = { set, currentRevision: 'web-1', updateRevision: 'web-2', collisionCount: 0, rolled: 0, now: NOW };
    const rolling = calculateStatus({ ...input, pods: [member(set, 0, 'ready', 'web-2'), member(set, 1, 'running', 'web-2')] });
    expect(rolling.currentRevision).toBe('web-1');
    expect(rolling.currentReplicas).toBeUndefined();
    const done = calculateStatus({ ...input, pods: [member(set, 0, 'ready', 'web-2'), member(set, 1, 'ready', 'web-2')] });
    expect(done).toMatchObject({ currentRevision: 'web-2', updateRevision: 'web-2', currentReplicas: 2, updatedReplicas: 2 });
  });

  it('never completes an OnDelete update by itself, and counts pods deleted for the update as no longer current', () => {
    const set = testSet({ replicas: 1, updateStrategy: { type: 'OnDelete' } });
    const input = { set, currentRevision: 'web-1', updateRevision: 'web-2', collisionCount: 0, now: NOW };
    expect(calculateStatus({ ...input, rolled: 0, pods: [member(set, 0, 'ready', 'web-2')] }).currentRevision).toBe('web-1');
    const rolling = testSet({ replicas: 1 });
    expect(calculateStatus({ ...input, set: rolling, rolled: 1, pods: [member(rolling, 0, 'ready', 'web-1')] }).currentReplicas).toBeUndefined();
  });

  it('is written only when a reported field changes', () => {
    const set = testSet();
    set.status = {
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      currentRevision: 'web-1',
      updateRevision: 'web-1',
      collisionCount: 0,
      observedGeneration: 1,
    };
    expect(statusChanged(set, { ...set.status })).toBe(false);
    expect(statusChanged(set, { ...set.status, readyReplicas: 2 })).toBe(true);
    expect(statusChanged(set, { ...set.status, updateRevision: 'web-2' })).toBe(true);
  });
});
