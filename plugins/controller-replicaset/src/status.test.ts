import type { ReplicaSet } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { calculateStatus, statusChanged } from './status.js';
import { testPod } from './test-pods.js';

const NOW = Date.parse('2024-01-01T00:10:00Z');

function replicaSet(minReadySeconds = 0, status?: ReplicaSet['status']): ReplicaSet {
  return {
    metadata: { name: 'web', namespace: 'default', generation: 3 },
    spec: {
      replicas: 3,
      minReadySeconds,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web', tier: 'front' } }, spec: { containers: [{ name: 'app' }] } },
    },
    status,
  };
}

describe('calculateStatus', () => {
  const pods = [
    testPod('a', { labels: { app: 'web', tier: 'front' }, readySince: '2024-01-01T00:09:50Z' }),
    testPod('b', { labels: { app: 'web', tier: 'front' }, readySince: '2024-01-01T00:00:00Z' }),
    testPod('c', { labels: { app: 'web' } }),
  ];

  it('counts replicas, fully labeled, ready and available pods and records the generation', () => {
    expect(calculateStatus(replicaSet(), pods, undefined, NOW)).toEqual({
      replicas: 3,
      fullyLabeledReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      observedGeneration: 3,
    });
  });

  it('counts a ready pod as available only after minReadySeconds', () => {
    expect(calculateStatus(replicaSet(30), pods, undefined, NOW).availableReplicas).toBe(1);
  });

  it('leaves zero counts out but always reports replicas', () => {
    expect(calculateStatus(replicaSet(), [], undefined, NOW)).toEqual({ replicas: 0, observedGeneration: 3 });
  });

  it('sets ReplicaFailure while pods cannot be created, and clears it once they can', () => {
    const failing = calculateStatus(replicaSet(), [], { reason: 'FailedCreate', message: 'pods "web-" is forbidden: exceeded quota' }, NOW);
    expect(failing.conditions).toEqual([
      {
        type: 'ReplicaFailure',
        status: 'True',
        lastTransitionTime: '2024-01-01T00:10:00Z',
        reason: 'FailedCreate',
        message: 'pods "web-" is forbidden: exceeded quota',
      },
    ]);
    const stillFailing = calculateStatus(replicaSet(0, failing), [], { reason: 'FailedCreate', message: 'again' }, NOW + 60_000);
    expect(stillFailing.conditions).toEqual(failing.conditions);
    expect(calculateStatus(replicaSet(0, failing), [], undefined, NOW).conditions).toBeUndefined();
  });
});

describe('statusChanged', () => {
  it('treats missing counts as zero and notices any difference', () => {
    const rs = replicaSet(0, { replicas: 2, readyReplicas: 0, observedGeneration: 3 });
    expect(statusChanged(rs, { replicas: 2, observedGeneration: 3 })).toBe(false);
    expect(statusChanged(rs, { replicas: 2, readyReplicas: 1, observedGeneration: 3 })).toBe(true);
    expect(statusChanged(rs, { replicas: 2, observedGeneration: 4 })).toBe(true);
  });
});
