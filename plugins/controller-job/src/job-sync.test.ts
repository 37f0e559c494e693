import type { Job, JobSpec, JobStatus, Pod } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { NO_BACKOFF, nextBackoffRecord, remainingBackoffMs } from './backoff.js';
import { formatIndexes, parseIndexes } from './indexes.js';
import { planJob, settleStatus, type JobSyncInput } from './job-sync.js';
import { JOB_LABEL, JOB_TRACKING_FINALIZER } from './names.js';

const NOW = Date.parse('2024-05-06T10:00:00Z');

function job(spec: Partial<JobSpec> = {}, status?: JobStatus): Job {
  return {
    metadata: { name: 'work', namespace: 'default', uid: 'job-uid' },
    spec: { parallelism: 1, completions: 1, backoffLimit: 6, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c' }] } }, ...spec },
    ...(status ? { status } : {}),
  };
}

let podCount = 0;
function pod(
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed',
  options: { index?: number; deleting?: boolean; finalizer?: boolean; ready?: boolean; finishedAt?: string; restarts?: number; uid?: string } = {},
): Pod {
  podCount += 1;
  const annotations = options.index === undefined ? undefined : { [JOB_LABEL.COMPLETION_INDEX]: String(options.index) };
  return {
    metadata: {
      name: `work-${podCount}`,
      namespace: 'default',
      uid: options.uid ?? `pod-${podCount}`,
      creationTimestamp: '2024-05-06T09:00:00Z',
      ...(options.finalizer === false ? {} : { finalizers: [JOB_TRACKING_FINALIZER] }),
      ...(annotations ? { annotations } : {}),
      ...(options.deleting ? { deletionTimestamp: '2024-05-06T09:59:00Z' } : {}),
    },
    spec: { nodeName: 'node-1', containers: [{ name: 'c' }] },
    status: {
      phase,
      ...(options.ready ? { conditions: [{ type: 'Ready', status: 'True' }] } : {}),
      containerStatuses: [
        {
          name: 'c',
          image: 'busybox',
          imageID: '',
          ready: Boolean(options.ready),
          restartCount: options.restarts ?? 0,
          state: options.finishedAt ? { terminated: { exitCode: phase === 'Failed' ? 1 : 0, finishedAt: options.finishedAt } } : {},
        },
      ],
    },
  };
}

function input(target: Job, pods: Pod[], overrides: Partial<JobSyncInput> = {}): JobSyncInput {
  return {
    job: target,
    pods,
    now: NOW,
    releasing: new Set(),
    expectationsSatisfied: true,
    backoff: NO_BACKOFF,
    backoffBaseMs: 10_000,
    backoffMaxMs: 360_000,
    ...overrides,
  };
}

const trueTypes = (status: JobStatus) => (status.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type);

describe('planJob', () => {
  it('starts a new Job: start time, as many pods as parallelism allows within the completions', () => {
    const plan = planJob(input(job({ completions: 5, parallelism: 3 }), []));
    expect(plan).toMatchObject({ create: 3, createIndexes: [], remove: [], release: [] });
    expect(plan.status).toMatchObject({ startTime: '2024-05-06T10:00:00Z', active: 3, ready: 0, terminating: 0, uncountedTerminatedPods: {} });
    expect(plan.record).toBeUndefined();
    expect(planJob(input(job({ completions: 2, parallelism: 5 }), [pod('Succeeded', { finalizer: false })], {})).create).toBe(2);
  });

  it('creates nothing while its own creations or deletions are not in the cache yet', () => {
    expect(planJob(input(job({ parallelism: 2, completions: 2 }), [], { expectationsSatisfied: false })).create).toBe(0);
  });

  it('records a finished pod as uncounted first, then counts it once its finalizer is off and completes', () => {
    const done = pod('Succeeded', { uid: 'a' });
    const plan = planJob(input(job({}, { startTime: '2024-05-06T09:00:00Z' }), [done]));
    expect(plan.record?.uncountedTerminatedPods).toEqual({ succeeded: ['a'] });
    expect(trueTypes(plan.record!)).toEqual(['SuccessCriteriaMet']);
    expect(plan.release).toEqual([done]);
    expect(plan.create).toBe(0);
    // The finalizer came off: counted, and with nothing left running the Job is complete.
    const settled = settleStatus(plan.status, new Set(), plan.finishing, NOW, false);
    expect(settled.status).toMatchObject({ succeeded: 1, uncountedTerminatedPods: {}, completionTime: '2024-05-06T10:00:00Z' });
    expect(trueTypes(settled.status)).toEqual(['SuccessCriteriaMet', 'Complete']);
    expect(settled.status.conditions![1]).toMatchObject({ reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' });
    expect(settled.events).toEqual([{ type: 'Normal', reason: 'Completed', message: 'Job completed' }]);
    // While the finalizer is still on, the pod stays uncounted and the Job is not complete yet.
    const held = settleStatus(plan.status, new Set(['a']), plan.finishing, NOW, false);
    expect(held.status.uncountedTerminatedPods).toEqual({ succeeded: ['a'] });
    expect(trueTypes(held.status)).toEqual(['SuccessCriteriaMet']);
  });

  it('does not count a pod twice: uncounted ones, and ones being released', () => {
    const done = pod('Succeeded', { uid: 'a' });
    const recorded = job({ completions: 3 }, { startTime: '2024-05-06T09:00:00Z', uncountedTerminatedPods: { succeeded: ['a'] } });
    const plan = planJob(input(recorded, [done]));
    expect(plan.record).toBeUndefined();
    expect(plan.release).toEqual([done]);
    expect(settleStatus(plan.status, new Set(), undefined, NOW, false).status.succeeded).toBe(1);
    const releasing = planJob(input(job({ completions: 3 }, { startTime: '2024-05-06T09:00:00Z', succeeded: 1 }), [done], { releasing: new Set(['a']) }));
    expect(releasing.release).toEqual([]);
    expect(releasing.status.uncountedTerminatedPods).toEqual({});
  });

  it('waits out the backoff before replacing a failed pod', () => {
    const failed = pod('Failed', { uid: 'f', finishedAt: '2024-05-06T09:59:55Z' });
    const plan = planJob(input(job(), [failed]));
    expect(plan.record?.uncountedTerminatedPods).toEqual({ failed: ['f'] });
    expect(plan.backoff).toEqual({ failuresAfterLastSuccess: 1, lastFailureTime: Date.parse('2024-05-06T09:59:55Z') });
    expect(plan.create).toBe(0);
    expect(plan.requeueAfterMs).toBe(5_000);
    // Once the 10 s have passed, a replacement.
    expect(planJob(input(job(), [failed], { now: NOW + 5_000 })).create).toBe(1);
  });

  it('fails the Job past the backoff limit: FailureTarget, active pods deleted, Failed once none is left', () => {
    const running = pod('Running');
    const plan = planJob(
      input(job({ backoffLimit: 1, parallelism: 2, completions: 4 }, { failed: 1, startTime: '2024-05-06T09:00:00Z' }), [pod('Failed', { uid: 'f' }), running]),
    );
    expect(trueTypes(plan.record!)).toEqual(['FailureTarget']);
    expect(plan.record!.conditions![0]).toMatchObject({ reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' });
    expect(plan.remove).toEqual([running]);
    expect(plan.create).toBe(0);
    expect(plan.status).toMatchObject({ active: 0, terminating: 1 });
    const held = settleStatus(plan.status, new Set([running.metadata.uid!]), plan.finishing, NOW, false);
    expect(trueTypes(held.status)).toEqual(['FailureTarget']);
    expect(held.status.failed).toBe(2);
    // Next pass: the deleted pod counts as failed; once it is gone, the Job is Failed.
    const after = job({ backoffLimit: 1 }, held.status);
    const next = planJob(input(after, [{ ...running, metadata: { ...running.metadata, deletionTimestamp: '2024-05-06T10:00:00Z' } }]));
    expect(next.status.uncountedTerminatedPods).toEqual({ failed: [running.metadata.uid] });
    const last = planJob(input(job({ backoffLimit: 1 }, settleStatus(next.status, new Set(), next.finishing, NOW, false).status), []));
    const final = settleStatus(last.status, new Set(), last.finishing, NOW, false);
    expect(trueTypes(final.status)).toEqual(['FailureTarget', 'Failed']);
    expect(final.status.failed).toBe(3);
    expect(final.status.completionTime).toBeUndefined();
    expect(final.events).toEqual([{ type: 'Warning', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' }]);
  });

  it('fails an OnFailure Job whose containers restarted as often as the backoff limit', () => {
    const onFailure = job({ backoffLimit: 3, template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c' }] } } });
    expect(planJob(input(onFailure, [pod('Running', { restarts: 2 })])).finishing).toBeUndefined();
    expect(planJob(input(onFailure, [pod('Running', { restarts: 3 })])).finishing).toMatchObject({ reason: 'BackoffLimitExceeded' });
  });

  it('fails a Job past its active deadline, and asks to be synced when the deadline comes', () => {
    const started = job({ activeDeadlineSeconds: 60 }, { startTime: '2024-05-06T09:59:30Z' });
    expect(planJob(input(started, [pod('Running')])).requeueAfterMs).toBe(30_000);
    const late = planJob(input(started, [pod('Running')], { now: NOW + 30_000 }));
    expect(late.finishing).toMatchObject({ interim: 'FailureTarget', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' });
    expect(late.remove).toHaveLength(1);
  });

  it('without completions: no new pod after a success, complete when the running ones are done', () => {
    const workQueue = job({ completions: undefined, parallelism: 3 }, { startTime: '2024-05-06T09:00:00Z', succeeded: 1 });
    const running = planJob(input(workQueue, [pod('Running')]));
    expect(running).toMatchObject({ create: 0, remove: [] });
    expect(running.finishing).toBeUndefined();
    expect(planJob(input(workQueue, [])).finishing).toMatchObject({ terminal: 'Complete' });
    expect(planJob(input(job({ completions: undefined, parallelism: 3 }), [])).create).toBe(3);
  });

  it('deletes surplus pods when parallelism goes down, not-ready ones first', () => {
    const ready = pod('Running', { ready: true });
    const notReady = pod('Running');
    const plan = planJob(input(job({ completions: 5, parallelism: 1 }, { startTime: '2024-05-06T09:00:00Z' }), [ready, notReady]));
    expect(plan.remove).toEqual([notReady]);
    expect(plan.status).toMatchObject({ active: 1, ready: 1 });
  });

  it('Indexed: creates the lowest pending indexes, drops duplicates, counts completed indexes', () => {
    const spec = { completionMode: 'Indexed' as const, completions: 5, parallelism: 3 };
    const done = pod('Succeeded', { index: 0 });
    const runningOne = pod('Running', { index: 1, ready: true });
    const duplicate = pod('Pending', { index: 1 });
    const plan = planJob(input(job(spec, { startTime: '2024-05-06T09:00:00Z', completedIndexes: '3' }), [done, runningOne, duplicate]));
    expect(plan.remove).toEqual([duplicate]);
    expect(plan.createIndexes).toEqual([2, 4]);
    expect(plan.record).toMatchObject({ completedIndexes: '0,3', succeeded: 2 });
    expect(plan.release).toEqual([done]);
  });

  it('suspends: active pods deleted without counting them as failures, start time cleared; resumes with a new start time', () => {
    const running = pod('Running');
    const suspended = planJob(input(job({ suspend: true }, { startTime: '2024-05-06T09:00:00Z' }), [running]));
    expect(suspended.remove).toEqual([running]);
    expect(suspended.status.startTime).toBeUndefined();
    expect(suspended.status.conditions).toEqual([
      {
        type: 'Suspended',
        status: 'True',
        reason: 'JobSuspended',
        message: 'Job suspended',
        lastProbeTime: '2024-05-06T10:00:00Z',
        lastTransitionTime: '2024-05-06T10:00:00Z',
      },
    ]);
    expect(suspended.events).toEqual([{ type: 'Normal', reason: 'Suspended', message: 'Job suspended' }]);
    const terminating = { ...running, metadata: { ...running.metadata, deletionTimestamp: '2024-05-06T10:00:00Z' } };
    const later = planJob(input(job({ suspend: true }, suspended.status), [terminating]));
    expect(later.release).toEqual([terminating]);
    expect(later.status.uncountedTerminatedPods).toEqual({});
    expect(later.events).toEqual([]);
    const resumed = planJob(input(job({ suspend: false }, suspended.status), [], { now: NOW + 60_000 }));
    expect(resumed.status.startTime).toBe('2024-05-06T10:01:00Z');
    expect(resumed.status.conditions![0]).toMatchObject({ type: 'Suspended', status: 'False', reason: 'JobResumed', message: 'Job resumed' });
    expect(resumed.create).toBe(1);
  });

  it('keeps a place for terminating pods under podReplacementPolicy Failed', () => {
    const terminating = pod('Running', { deleting: true });
    expect(planJob(input(job({ podReplacementPolicy: 'Failed' }, { startTime: '2024-05-06T09:00:00Z' }), [terminating])).create).toBe(0);
    expect(planJob(input(job({ podReplacementPolicy: 'TerminatingOrFailed' }, { startTime: '2024-05-06T09:00:00Z' }), [terminating])).create).toBe(1);
  });
});

describe('podFailurePolicy', () => {
  const policy = {
    rules: [
      { action: 'FailJob', onExitCodes: { containerName: 'c', operator: 'In', values: [42] } },
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
      { action: 'Ignore', onExitCodes: { operator: 'In', values: [137] } },
    ],
  };
  const failedWith = (exitCode: number, disrupted = false): Pod => {
    const failed = pod('Failed', { finishedAt: '2024-05-06T09:59:00Z' });
    failed.status!.containerStatuses![0]!.state = { terminated: { exitCode, finishedAt: '2024-05-06T09:59:00Z' } };
    if (disrupted) failed.status!.conditions = [{ type: 'DisruptionTarget', status: 'True' }];
    return failed;
  };
  const started = (spec: Partial<JobSpec> = {}) => job({ podFailurePolicy: policy, backoffLimit: 6, ...spec }, { startTime: '2024-05-06T09:00:00Z' });

  it('fails the Job at once on a FailJob rule, naming the container, pod, exit code and rule', () => {
    const failed = failedWith(42);
    const plan = planJob(input(started(), [failed]));
    expect(plan.finishing).toMatchObject({ interim: 'FailureTarget', terminal: 'Failed', reason: 'PodFailurePolicy' });
    expect(plan.record!.conditions![0]!.message).toBe(
      `Container c for pod default/${failed.metadata.name} failed with exit code 42 matching FailJob rule at index 0`,
    );
    expect(plan.record!.uncountedTerminatedPods).toEqual({ failed: [failed.metadata.uid] });
  });

  it('does not count failures an Ignore rule matches, and replaces those pods at once', () => {
    for (const ignored of [failedWith(137), failedWith(1, true)]) {
      const plan = planJob(input(started(), [ignored]));
      expect(plan.finishing).toBeUndefined();
      expect(plan.release).toEqual([ignored]);
      expect(plan.status.uncountedTerminatedPods).toEqual({});
      expect(plan.create).toBe(1);
    }
  });

  it('counts failures no rule matches', () => {
    const plan = planJob(input(started({ backoffLimit: 0 }), [failedWith(1)]));
    expect(plan.finishing).toMatchObject({ reason: 'BackoffLimitExceeded' });
  });
});

describe('backoff', () => {
  it('doubles per failure since the last success, up to the maximum', () => {
    const failure = Date.parse('2024-05-06T09:59:00Z');
    expect(remainingBackoffMs({ failuresAfterLastSuccess: 1, lastFailureTime: failure }, failure, 10_000, 360_000)).toBe(10_000);
    expect(remainingBackoffMs({ failuresAfterLastSuccess: 3, lastFailureTime: failure }, failure + 5_000, 10_000, 360_000)).toBe(35_000);
    expect(remainingBackoffMs({ failuresAfterLastSuccess: 10, lastFailureTime: failure }, failure, 10_000, 360_000)).toBe(360_000);
    expect(remainingBackoffMs(NO_BACKOFF, failure, 10_000, 360_000)).toBe(0);
  });

  it('a success clears the failures before it', () => {
    const record = nextBackoffRecord({ failuresAfterLastSuccess: 2, lastFailureTime: 100 }, [200], [150, 300]);
    expect(record).toEqual({ failuresAfterLastSuccess: 1, lastFailureTime: 300 });
    expect(nextBackoffRecord(record, [], [400])).toEqual({ failuresAfterLastSuccess: 2, lastFailureTime: 400 });
  });
});

describe('completed indexes', () => {
  it('formats and parses intervals', () => {
    expect(formatIndexes([4, 0, 1, 2, 7, 9, 8])).toBe('0-2,4,7-9');
    expect(formatIndexes([])).toBe('');
    expect([...parseIndexes('0-2,4,7-9', 9)].sort((a, b) => a - b)).toEqual([0, 1, 2, 4, 7, 8]);
  });
});
