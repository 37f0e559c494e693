import type { Pod, PodDisruptionBudget } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { budgetTargets, countHealthy, failedStatus, needsScale, nextStatus, pendingDisruptions, staleDisruptionDelay } from './budget.js';

const NOW = Date.parse('2025-01-01T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString().replace(/\.\d+Z$/, 'Z');

function pod(name: string, options: { ready?: boolean; deleting?: boolean; phase?: string; disruptionTarget?: { reason: string; since: string } } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', ...(options.deleting ? { deletionTimestamp: ago(0) } : {}) },
    spec: { containers: [{ name: 'c', image: 'pause' }] },
    status: {
      phase: options.phase ?? 'Running',
      conditions: [
        { type: 'Ready', status: options.ready === false ? 'False' : 'True' },
        ...(options.disruptionTarget
          ? [{ type: 'DisruptionTarget', status: 'True', reason: options.disruptionTarget.reason, lastTransitionTime: options.disruptionTarget.since }]
          : []),
      ],
    },
  };
}

function budget(spec: PodDisruptionBudget['spec'], status: PodDisruptionBudget['status'] = {}, generation = 1): PodDisruptionBudget {
  return { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'b', namespace: 'default', generation }, spec, status };
}

describe('budget targets', () => {
  it('counts minAvailable against the pods found, percentages and maxUnavailable against the controllers', () => {
    expect(needsScale({ minAvailable: 2 })).toBe(false);
    expect(needsScale({ minAvailable: '50%' })).toBe(true);
    expect(needsScale({ maxUnavailable: 1 })).toBe(true);
    expect(budgetTargets({ minAvailable: 2 }, 3, 0)).toEqual({ expectedPods: 3, desiredHealthy: 2 });
    // Percentages round up: 90% of 10 is 9, 1% of 3 is 1, 10% unavailable of 10 leaves 9.
    expect(budgetTargets({ minAvailable: '90%' }, 4, 10)).toEqual({ expectedPods: 10, desiredHealthy: 9 });
    expect(budgetTargets({ minAvailable: '1%' }, 3, 3)).toEqual({ expectedPods: 3, desiredHealthy: 1 });
    expect(budgetTargets({ maxUnavailable: '10%' }, 10, 10)).toEqual({ expectedPods: 10, desiredHealthy: 9 });
    expect(budgetTargets({ maxUnavailable: '15%' }, 10, 10)).toEqual({ expectedPods: 10, desiredHealthy: 8 });
    expect(budgetTargets({ maxUnavailable: 5 }, 2, 3)).toEqual({ expectedPods: 3, desiredHealthy: 0 });
    expect(budgetTargets({}, 3, 0)).toEqual({ expectedPods: 0, desiredHealthy: 0 });
    expect(() => budgetTargets({ minAvailable: '5' }, 3, 3)).toThrow(/string is not a percentage/);
  });
});

describe('disrupted pods', () => {
  it('keeps entries of live pods for two minutes, and says when to look again', () => {
    const pods = [pod('fresh'), pod('old'), pod('deleting', { deleting: true }), pod('untouched')];
    const recorded = { fresh: ago(30_000), old: ago(121_000), deleting: ago(1000), gone: ago(1000) };
    const result = pendingDisruptions(pods, recorded, NOW);
    expect(result.disruptedPods).toEqual({ fresh: ago(30_000) });
    expect(result.notDeleted.map((p) => p.metadata.name)).toEqual(['old']);
    expect(result.recheckAt).toBe(NOW + 90_000);
    expect(pendingDisruptions(pods, undefined, NOW)).toEqual({ disruptedPods: {}, notDeleted: [] });
  });

  it('counts ready pods that are neither being deleted nor recently disrupted', () => {
    const pods = [pod('a'), pod('b'), pod('c', { ready: false }), pod('d', { deleting: true }), pod('e')];
    expect(countHealthy(pods, {}, NOW)).toBe(3);
    expect(countHealthy(pods, { a: ago(10_000) }, NOW)).toBe(2);
    expect(countHealthy(pods, { a: ago(130_000) }, NOW)).toBe(3);
  });
});

describe('next status', () => {
  const observed = { currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, disruptedPods: {} };

  it('allows the surplus of healthy pods, with a SufficientPods condition', () => {
    const status = nextStatus(budget({ minAvailable: 2 }), observed, NOW);
    expect(status).toEqual({
      currentHealthy: 3,
      desiredHealthy: 2,
      expectedPods: 3,
      disruptionsAllowed: 1,
      observedGeneration: 1,
      conditions: [
        {
          type: 'DisruptionAllowed',
          status: 'True',
          reason: 'SufficientPods',
          message: 'enough healthy pods to allow a disruption',
          observedGeneration: 1,
          lastTransitionTime: ago(0),
        },
      ],
    });
    // Written once, nothing more to write.
    expect(nextStatus(budget({ minAvailable: 2 }, status), observed, NOW + 5000)).toBeUndefined();
    // A new generation is observed even when the numbers stay.
    expect(nextStatus(budget({ minAvailable: 2 }, status, 2), observed, NOW)?.observedGeneration).toBe(2);
  });

  it('allows nothing while too few are healthy or no pod is expected', () => {
    const short = nextStatus(budget({ minAvailable: 3 }), { ...observed, desiredHealthy: 3 }, NOW)!;
    expect(short.disruptionsAllowed).toBe(0);
    expect(short.conditions).toEqual([expect.objectContaining({ status: 'False', reason: 'InsufficientPods' })]);
    expect(nextStatus(budget({ maxUnavailable: 1 }), { ...observed, expectedPods: 0 }, NOW)!.disruptionsAllowed).toBe(0);
  });

  it('moves the condition transition time only when its status changes, and drops other conditions', () => {
    const earlier = nextStatus(budget({ minAvailable: 2 }), observed, NOW - 60_000)!;
    earlier.conditions!.push({ type: 'Other', status: 'True', reason: 'X', message: '', lastTransitionTime: ago(0) });
    const sameStatus = nextStatus(budget({ minAvailable: 2 }, earlier), { ...observed, currentHealthy: 4 }, NOW)!;
    expect(sameStatus.conditions).toEqual([expect.objectContaining({ type: 'DisruptionAllowed', lastTransitionTime: ago(60_000) })]);
    const flipped = nextStatus(budget({ minAvailable: 2 }, earlier), { ...observed, currentHealthy: 2 }, NOW)!;
    expect(flipped.conditions).toEqual([expect.objectContaining({ status: 'False', lastTransitionTime: ago(0) })]);
  });

  it('writes pending disruptions and drops them when they are done', () => {
    const withEntry = nextStatus(budget({ minAvailable: 2 }), { ...observed, disruptedPods: { a: ago(1000) } }, NOW)!;
    expect(withEntry.disruptedPods).toEqual({ a: ago(1000) });
    expect(nextStatus(budget({ minAvailable: 2 }, withEntry), { ...observed, disruptedPods: { a: ago(1000) } }, NOW)).toBeUndefined();
    expect(nextStatus(budget({ minAvailable: 2 }, withEntry), observed, NOW)).not.toHaveProperty('disruptedPods');
  });

  it('fails safe: nothing allowed, the reason in the condition, the rest kept', () => {
    const good = nextStatus(budget({ minAvailable: '50%' }), observed, NOW)!;
    const failed = failedStatus(budget({ minAvailable: '50%' }, good), 'found no controllers for pod "x"', NOW)!;
    expect(failed).toEqual({
      ...good,
      disruptionsAllowed: 0,
      conditions: [
        {
          type: 'DisruptionAllowed',
          status: 'False',
          reason: 'SyncFailed',
          message: 'found no controllers for pod "x"',
          observedGeneration: 1,
          lastTransitionTime: ago(0),
        },
      ],
    });
    expect(failedStatus(budget({ minAvailable: '50%' }, failed), 'found no controllers for pod "x"', NOW)).toBeUndefined();
  });
});

describe('stale DisruptionTarget conditions', () => {
  it('waits two minutes after the condition was set, unless the kubelet set it or the pod is going or gone', () => {
    expect(staleDisruptionDelay(pod('a', { disruptionTarget: { reason: 'EvictionByEvictionAPI', since: ago(30_000) } }), NOW)).toBe(90_000);
    expect(staleDisruptionDelay(pod('a', { disruptionTarget: { reason: 'EvictionByEvictionAPI', since: ago(300_000) } }), NOW)).toBe(0);
    expect(staleDisruptionDelay(pod('a', { disruptionTarget: { reason: 'TerminationByKubelet', since: ago(300_000) } }), NOW)).toBeUndefined();
    expect(staleDisruptionDelay(pod('a', { deleting: true, disruptionTarget: { reason: 'PreemptionByScheduler', since: ago(300_000) } }), NOW)).toBeUndefined();
    expect(
      staleDisruptionDelay(pod('a', { phase: 'Failed', disruptionTarget: { reason: 'PreemptionByScheduler', since: ago(300_000) } }), NOW),
    ).toBeUndefined();
    expect(staleDisruptionDelay(pod('a'), NOW)).toBeUndefined();
  });
});
