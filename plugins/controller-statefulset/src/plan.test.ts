import { describe, expect, it } from 'vitest';
import { maxUnavailableOf } from './plan.js';
import { describePlan, member, NOW, plan, testSet } from './test-objects.js';

describe('OrderedReady scaling', () => {
  it('creates web-0 first, and only web-0', () => {
    const set = testSet();
    const p = plan(set, []);
    expect(describePlan(p)).toEqual(['create web-0']);
    expect(p.waitingFor).toBe('web-0 to be created');
  });

  it('waits for each pod to be Running and Ready before creating the next', () => {
    const set = testSet();
    expect(describePlan(plan(set, [member(set, 0, 'pending')]))).toEqual([]);
    expect(plan(set, [member(set, 0, 'running')]).waitingFor).toBe('web-0 to be Running and Ready');
    expect(describePlan(plan(set, [member(set, 0)]))).toEqual(['create web-1']);
    expect(describePlan(plan(set, [member(set, 0), member(set, 1)]))).toEqual(['create web-2']);
    expect(describePlan(plan(set, [member(set, 0), member(set, 1), member(set, 2)]))).toEqual([]);
  });

  it('waits minReadySeconds after a pod turned ready before creating the next', () => {
    const set = testSet({ minReadySeconds: 10 });
    const justReady = member(set, 0, 'ready', 'web-1', new Date(NOW - 5000).toISOString());
    expect(plan(set, [justReady]).waitingFor).toBe('web-0 to be Available');
    expect(describePlan(plan(set, [justReady], { now: NOW + 6000 }))).toEqual(['create web-1']);
  });

  it('recreates a missing lower ordinal before going on, and waits for a terminating one', () => {
    const set = testSet();
    expect(describePlan(plan(set, [member(set, 1), member(set, 2)]))).toEqual(['create web-0']);
    expect(plan(set, [member(set, 0, 'terminating'), member(set, 1), member(set, 2)]).waitingFor).toBe('web-0 to terminate');
  });

  it('deletes a failed pod (to be recreated next pass) and does nothing else in that pass', () => {
    const set = testSet();
    const p = plan(set, [member(set, 0), member(set, 1, 'failed'), member(set, 2, 'succeeded')]);
    expect(describePlan(p)).toEqual(['replace-finished web-1']);
  });

  it('scales down from the highest ordinal, one pod at a time, each gone before the next', () => {
    const set = testSet({ replicas: 1 });
    const all = [member(set, 0), member(set, 1), member(set, 2)];
    expect(describePlan(plan(set, all))).toEqual(['scale-down web-2']);
    expect(plan(set, [member(set, 0), member(set, 1), member(set, 2, 'terminating')]).waitingFor).toBe('web-2 to terminate');
    expect(describePlan(plan(set, [member(set, 0), member(set, 1)]))).toEqual(['scale-down web-1']);
  });

  it('scales down only once every kept replica is healthy, but may remove the first unhealthy pod itself', () => {
    const set = testSet({ replicas: 1 });
    expect(describePlan(plan(set, [member(set, 0, 'running'), member(set, 1)]))).toEqual([]);
    expect(describePlan(plan(set, [member(set, 0), member(set, 1), member(set, 2, 'running')]))).toEqual(['scale-down web-2']);
    // web-1 and web-2 are both unhealthy; web-2 comes first, but web-1 is the first unhealthy pod: wait.
    expect(describePlan(plan(set, [member(set, 0), member(set, 1, 'running'), member(set, 2, 'running')]))).toEqual([]);
    expect(describePlan(plan(set, [member(set, 0), member(set, 1, 'running'), member(set, 2)]))).toEqual(['scale-down web-2']);
  });

  it('counts ordinals from spec.ordinals.start', () => {
    const set = testSet({ replicas: 2, ordinals: { start: 3 } });
    expect(describePlan(plan(set, []))).toEqual(['create web-3']);
    expect(describePlan(plan(set, [member(set, 3), member(set, 4), member(set, 0)]))).toEqual(['scale-down web-0']);
  });

  it('leaves everything alone while the set is being deleted', () => {
    const set = testSet();
    set.metadata.deletionTimestamp = '2024-05-01T11:00:00Z';
    expect(describePlan(plan(set, [member(set, 0, 'failed')]))).toEqual([]);
  });
});

describe('Parallel scaling', () => {
  it('creates every missing pod in one pass without waiting for readiness', () => {
    const set = testSet({ podManagementPolicy: 'Parallel' });
    const p = plan(set, [member(set, 1, 'pending')]);
    expect(p.monotonic).toBe(false);
    expect(describePlan(p)).toEqual(['create web-0', 'create web-2']);
  });

  it('deletes every condemned pod in one pass, skipping terminating ones', () => {
    const set = testSet({ podManagementPolicy: 'Parallel', replicas: 1 });
    const p = plan(set, [member(set, 0, 'pending'), member(set, 1), member(set, 2, 'terminating'), member(set, 3, 'running')]);
    expect(describePlan(p)).toEqual(['scale-down web-3', 'scale-down web-1']);
  });
});

describe('RollingUpdate', () => {
  const all = (set = testSet(), revision = 'web-1') => [
    member(set, 0, 'ready', revision),
    member(set, 1, 'ready', revision),
    member(set, 2, 'ready', revision),
  ];

  it('replaces pods in reverse ordinal order, one at a time, waiting for each to come back ready', () => {
    const set = testSet();
    expect(describePlan(plan(set, all(), { update: 'web-2' }))).toEqual(['roll web-2']);
    const terminating = [member(set, 0), member(set, 1), member(set, 2, 'terminating')];
    expect(plan(set, terminating, { update: 'web-2' }).waitingFor).toBe('web-2 to terminate');
    expect(describePlan(plan(set, [member(set, 0), member(set, 1)], { update: 'web-2' }))).toEqual(['create web-2']);
    const created = plan(set, [member(set, 0), member(set, 1)], { update: 'web-2' }).replicas[0]![0]!.pod;
    expect(created.metadata.labels!['controller-revision-hash']).toBe('web-2');
    expect(describePlan(plan(set, [member(set, 0), member(set, 1), member(set, 2, 'running', 'web-2')], { update: 'web-2' }))).toEqual([]);
    expect(describePlan(plan(set, [member(set, 0), member(set, 1), member(set, 2, 'ready', 'web-2')], { update: 'web-2' }))).toEqual(['roll web-1']);
    const lastOne = [member(set, 0), member(set, 1, 'ready', 'web-2'), member(set, 2, 'ready', 'web-2')];
    expect(describePlan(plan(set, lastOne, { update: 'web-2' }))).toEqual(['roll web-0']);
    expect(describePlan(plan(set, all(set, 'web-2'), { update: 'web-2' }))).toEqual([]);
  });

  it('stops at the partition: ordinals below it keep, and are recreated at, the current revision', () => {
    const set = testSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } });
    expect(describePlan(plan(set, all(), { update: 'web-2' }))).toEqual(['roll web-2']);
    expect(describePlan(plan(set, [member(set, 0), member(set, 1), member(set, 2, 'ready', 'web-2')], { update: 'web-2' }))).toEqual([]);
    const recreated = plan(set, [member(set, 1), member(set, 2, 'ready', 'web-2')], { update: 'web-2' }).replicas[0]![0]!.pod;
    expect(recreated.metadata.name).toBe('web-0');
    expect(recreated.metadata.labels!['controller-revision-hash']).toBe('web-1');
  });

  it('recreates pods below the partition from the current revision template', () => {
    const set = testSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } }, 'nginx:1.26');
    const currentSet = testSet({}, 'nginx:1.25');
    const p = plan(set, [member(set, 1, 'ready', 'web-2'), member(set, 2, 'ready', 'web-2')], { update: 'web-2', currentSet });
    expect(p.replicas[0]![0]!.pod.spec.containers[0]!.image).toBe('nginx:1.25');
    const above = plan(set, [member(set, 0), member(set, 2, 'ready', 'web-2')], { update: 'web-2', currentSet }).replicas[0]![0]!.pod;
    expect(above.spec.containers[0]!.image).toBe('nginx:1.26');
  });

  it('takes down up to maxUnavailable pods at once, counting pods already unavailable', () => {
    const set = testSet({
      replicas: 5,
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 2 } },
    });
    const pods = [0, 1, 2, 3, 4].map((ordinal) => member(set, ordinal));
    expect(describePlan(plan(set, pods, { update: 'web-2' }))).toEqual(['roll web-4', 'roll web-3']);
    pods[0] = member(set, 0, 'running');
    expect(describePlan(plan(set, pods, { update: 'web-2' }))).toEqual(['roll web-4']);
  });

  it('does not roll pods under OnDelete: a pod is updated when someone deletes it', () => {
    const set = testSet({ updateStrategy: { type: 'OnDelete' } });
    expect(describePlan(plan(set, all(), { update: 'web-2' }))).toEqual([]);
    const recreated = plan(set, [member(set, 0), member(set, 1)], { update: 'web-2' }).replicas[0]![0]!.pod;
    expect(recreated.metadata.labels!['controller-revision-hash']).toBe('web-2');
  });

  it('scales before it updates', () => {
    const set = testSet({ replicas: 2 });
    expect(describePlan(plan(set, all(), { update: 'web-2' }))).toEqual(['scale-down web-2']);
  });
});

describe('identity repair', () => {
  it('fixes a ready pod whose identity labels were removed, and carries on', () => {
    const set = testSet();
    const broken = member(set, 0);
    delete broken.metadata.labels!['statefulset.kubernetes.io/pod-name'];
    expect(describePlan(plan(set, [broken]))).toEqual(['update web-0', 'create web-1']);
  });
});

describe('maxUnavailable', () => {
  it('is 1 by default, a count as given, a percentage of replicas rounded down, never below 1', () => {
    expect(maxUnavailableOf(undefined, 10)).toBe(1);
    expect(maxUnavailableOf(3, 10)).toBe(3);
    expect(maxUnavailableOf('25%', 10)).toBe(2);
    expect(maxUnavailableOf('5%', 10)).toBe(1);
    expect(maxUnavailableOf('100%', 4)).toBe(4);
  });
});
