import { describe, expect, it } from 'vitest';
import { replicaSetsToCleanUp } from './history.js';
import { ANNOTATION } from './names.js';
import { oldPodsRunning } from './recreate.js';
import { testDeployment, testReplicaSet } from './test-objects.js';

describe('replicaSetsToCleanUp', () => {
  it('deletes the oldest revisions beyond revisionHistoryLimit, but only empty ones', () => {
    const d = testDeployment({ revisionHistoryLimit: 2 });
    const old = [
      testReplicaSet('web-r3', 0, { revision: 3 }),
      testReplicaSet('web-r1', 0, { revision: 1 }),
      testReplicaSet('web-r2', 2, { revision: 2 }),
      testReplicaSet('web-r4', 0, { revision: 4 }),
    ];
    // Two over the limit: r1 and r2 are the lowest revisions; r2 still runs pods, so only r1 goes.
    expect(replicaSetsToCleanUp(d, old).map((rs) => rs.metadata.name)).toEqual(['web-r1']);
  });

  it('orders int64 revisions exactly, whatever the creation order', () => {
    const d = testDeployment({ revisionHistoryLimit: 1 });
    const revision = (value: string) => ({ [ANNOTATION.REVISION]: value });
    const old = [
      testReplicaSet('web-higher', 0, { annotations: revision('9007199254740993'), created: '2024-01-01T00:00:00Z' }),
      testReplicaSet('web-lower', 0, { annotations: revision('9007199254740992'), created: '2024-01-02T00:00:00Z' }),
    ];
    expect(replicaSetsToCleanUp(d, old).map((rs) => rs.metadata.name)).toEqual(['web-lower']);
  });

  it('keeps ReplicaSets whose pods are not gone yet', () => {
    const d = testDeployment({ revisionHistoryLimit: 0 });
    const draining = testReplicaSet('web-r1', 0, { revision: 1, actual: 1 });
    expect(replicaSetsToCleanUp(d, [draining])).toEqual([]);
  });

  it('keeps ten old revisions by default', () => {
    const old = Array.from({ length: 11 }, (_, i) => testReplicaSet(`web-r${i + 1}`, 0, { revision: i + 1 }));
    expect(replicaSetsToCleanUp(testDeployment(), old).map((rs) => rs.metadata.name)).toEqual(['web-r1']);
  });
});

describe('oldPodsRunning', () => {
  const rs = testReplicaSet('web-old', 0, { actual: 0 });
  const pod = (phase: 'Running' | 'Succeeded' | 'Failed' | 'Unknown') => ({ metadata: { name: phase }, spec: { containers: [] }, status: { phase } });

  it('is true while an old ReplicaSet still reports pods', () => {
    expect(oldPodsRunning([testReplicaSet('web-old', 0, { actual: 2 })], () => [])).toBe(true);
  });

  it('ignores finished pods but counts unknown ones', () => {
    expect(oldPodsRunning([rs], () => [pod('Succeeded'), pod('Failed')])).toBe(false);
    expect(oldPodsRunning([rs], () => [pod('Unknown')])).toBe(true);
    expect(oldPodsRunning([rs], () => [pod('Running')])).toBe(true);
  });
});
