import { RESOURCES, type Event, type Job, type JobSpec, type Node, type Pod } from '@skiff/api';
import kubelet from '@skiff/kubelet';
import criSimulated from '@skiff/plugin-cri-simulated';
import networkIpam from '@skiff/plugin-network-ipam';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import scheduler from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import jobController from './index.js';
import { JOB_LABEL, JOB_TRACKING_FINALIZER } from './names.js';

// The Job controller with the scheduler, two simulated kubelets whose containers exit after 300 ms (or as
// the pod's annotations say), and a short failure backoff: every count and condition comes from real pods.

const ns = 'default';
const WAIT = { timeoutMs: 20_000 };
let plane: ControlPlane;

beforeAll(async () => {
  plane = await startControlPlane(
    [[jobController, { podFailureBackoffMs: 200 }], scheduler, resourcesFit, [kubelet, { heartbeatSeconds: 1 }], [criSimulated, { runMs: 300 }], networkIpam],
    { config: { nodes: 2, logLevel: 'silent' } },
  );
  await waitFor('2 nodes', async () => (await plane.client.list<Node>(RESOURCES.nodes)).items.length === 2, WAIT);
});
afterAll(async () => {
  await plane?.stop();
});

function job(name: string, spec: Partial<JobSpec> = {}, annotations?: Record<string, string>): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: ns },
    spec: {
      template: {
        metadata: annotations ? { annotations } : {},
        spec: { restartPolicy: 'Never', containers: [{ name: 'work', image: 'busybox:1.36' }] },
      },
      ...spec,
    },
  };
}

const getJob = (name: string) => plane.client.get<Job>(RESOURCES.jobs, name, ns);

async function podsOf(name: string): Promise<Pod[]> {
  return (await plane.client.list<Pod>(RESOURCES.pods, ns, { labelSelector: `${JOB_LABEL.JOB_NAME}=${name}` })).items;
}

async function conditionTypes(name: string): Promise<string[]> {
  return ((await getJob(name)).status?.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type);
}

async function finished(name: string, type: 'Complete' | 'Failed'): Promise<Job> {
  return waitFor(
    `job ${name} ${type}`,
    async () => {
      const current = await getJob(name);
      return current.status?.conditions?.some((c) => c.type === type && c.status === 'True') && current;
    },
    WAIT,
  );
}

async function eventsOf(name: string): Promise<Event[]> {
  return (await plane.client.list<Event>(RESOURCES.events, ns)).items.filter((e) => e.involvedObject.kind === 'Job' && e.involvedObject.name === name);
}

describe('Job controller against a real API server, scheduler and kubelets', () => {
  it('runs a pod to completion and completes the Job, with labels, owner, finalizer released and status', async () => {
    const created = await plane.client.create<Job>(RESOURCES.jobs, job('once'), ns);
    const done = await finished('once', 'Complete');
    expect(done.status).toMatchObject({ succeeded: 1, ready: 0, terminating: 0, uncountedTerminatedPods: {} });
    expect(done.status?.active).toBeUndefined();
    expect(done.status?.failed).toBeUndefined();
    expect(Date.parse(done.status!.completionTime!)).toBeGreaterThanOrEqual(Date.parse(done.status!.startTime!));
    expect(await conditionTypes('once')).toEqual(['SuccessCriteriaMet', 'Complete']);
    expect(done.status?.conditions?.find((c) => c.type === 'Complete')).toMatchObject({
      reason: 'CompletionsReached',
      message: 'Reached expected number of succeeded pods',
    });
    const [pod] = await podsOf('once');
    expect(pod!.metadata.name).toMatch(/^once-[a-z0-9]{5}$/);
    expect(pod!.metadata.labels).toMatchObject({
      [JOB_LABEL.CONTROLLER_UID]: created.metadata.uid,
      [JOB_LABEL.JOB_NAME]: 'once',
      'controller-uid': created.metadata.uid,
      'job-name': 'once',
    });
    expect(pod!.metadata.ownerReferences).toEqual([
      { apiVersion: 'batch/v1', kind: 'Job', name: 'once', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(pod!.status?.phase).toBe('Succeeded');
    await waitFor('the tracking finalizer to be released', async () => !(await podsOf('once'))[0]!.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER));
    await waitFor('the events', async () => {
      const reasons = (await eventsOf('once')).map((e) => `${e.reason}: ${e.message}`);
      return reasons.includes(`SuccessfulCreate: Created pod: ${pod!.metadata.name}`) && reasons.includes('Completed: Job completed');
    });
  });

  it('runs completions with at most parallelism pods at a time', async () => {
    await plane.client.create<Job>(RESOURCES.jobs, job('batch', { completions: 5, parallelism: 2 }), ns);
    let mostActive = 0;
    const done = await waitFor(
      'batch Complete',
      async () => {
        const current = await getJob('batch');
        const running = (await podsOf('batch')).filter((pod) => pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed').length;
        mostActive = Math.max(mostActive, running, current.status?.active ?? 0);
        return current.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') && current;
      },
      WAIT,
    );
    expect(done.status?.succeeded).toBe(5);
    expect(mostActive).toBeGreaterThan(0);
    expect(mostActive).toBeLessThanOrEqual(2);
    expect((await podsOf('batch')).filter((pod) => pod.status?.phase === 'Succeeded')).toHaveLength(5);
  });

  it('gives each index of an Indexed Job its own pod, hostname and completion index', async () => {
    await plane.client.create<Job>(RESOURCES.jobs, job('indexed', { completions: 3, parallelism: 3, completionMode: 'Indexed' }), ns);
    const done = await finished('indexed', 'Complete');
    expect(done.status).toMatchObject({ succeeded: 3, completedIndexes: '0-2' });
    const pods = await podsOf('indexed');
    const byIndex = new Map(pods.map((pod) => [pod.metadata.annotations?.[JOB_LABEL.COMPLETION_INDEX], pod]));
    expect([...byIndex.keys()].sort()).toEqual(['0', '1', '2']);
    const first = byIndex.get('1')!;
    expect(first.metadata.name).toMatch(/^indexed-1-[a-z0-9]{5}$/);
    expect(first.metadata.labels?.[JOB_LABEL.COMPLETION_INDEX]).toBe('1');
    expect(first.spec.hostname).toBe('indexed-1');
    expect(first.spec.containers[0]!.env).toContainEqual({
      name: 'JOB_COMPLETION_INDEX',
      valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: `metadata.annotations['${JOB_LABEL.COMPLETION_INDEX}']` } },
    });
  });

  it('replaces failed pods until the backoff limit, then fails the Job', async () => {
    const failing = { 'skiff.io/simulate-exit-code': '1', 'skiff.io/simulate-run-ms': '100' };
    await plane.client.create<Job>(RESOURCES.jobs, job('flaky', { backoffLimit: 2 }, failing), ns);
    const failed = await finished('flaky', 'Failed');
    expect(failed.status).toMatchObject({ failed: 3, terminating: 0, uncountedTerminatedPods: {} });
    expect(failed.status?.succeeded).toBeUndefined();
    expect(failed.status?.completionTime).toBeUndefined();
    expect(await conditionTypes('flaky')).toEqual(['FailureTarget', 'Failed']);
    expect(failed.status?.conditions?.find((c) => c.type === 'Failed')).toMatchObject({
      reason: 'BackoffLimitExceeded',
      message: 'Job has reached the specified backoff limit',
    });
    const pods = await podsOf('flaky');
    expect(pods).toHaveLength(3);
    expect(pods.every((pod) => pod.status?.phase === 'Failed' && !pod.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER))).toBe(true);
    expect(pods[0]!.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    await waitFor('the warning', async () =>
      (await eventsOf('flaky')).some(
        (e) => e.type === 'Warning' && `${e.reason}: ${e.message}` === 'BackoffLimitExceeded: Job has reached the specified backoff limit',
      ),
    );
  });

  it('fails the Job at once when a pod fails as a FailJob rule of its podFailurePolicy says', async () => {
    const podFailurePolicy = { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [42] } }] };
    await plane.client.create<Job>(RESOURCES.jobs, job('policy', { backoffLimit: 6, podFailurePolicy }, { 'skiff.io/simulate-exit-code': '42' }), ns);
    const failed = await finished('policy', 'Failed');
    const [pod] = await podsOf('policy');
    expect(failed.status?.conditions?.find((c) => c.type === 'Failed')).toMatchObject({
      reason: 'PodFailurePolicy',
      message: `Container work for pod default/${pod!.metadata.name} failed with exit code 42 matching FailJob rule at index 0`,
    });
    expect(failed.status?.failed).toBe(1);
  });

  it('fails a Job that runs past activeDeadlineSeconds, deleting its pods', async () => {
    await plane.client.create<Job>(RESOURCES.jobs, job('slow', { activeDeadlineSeconds: 1 }, { 'skiff.io/simulate-run-ms': '60000' }), ns);
    const failed = await finished('slow', 'Failed');
    expect(failed.status?.conditions?.find((c) => c.type === 'Failed')).toMatchObject({
      reason: 'DeadlineExceeded',
      message: 'Job was active longer than specified deadline',
    });
    expect(failed.status).toMatchObject({ failed: 1, terminating: 0 });
    await waitFor('the pod to be gone', async () => (await podsOf('slow')).length === 0, WAIT);
  });

  it('suspends and resumes a Job', async () => {
    await plane.client.create<Job>(RESOURCES.jobs, job('paused', { suspend: true }, { 'skiff.io/simulate-run-ms': '1000' }), ns);
    const suspended = await waitFor('Suspended', async () => {
      const current = await getJob('paused');
      return current.status?.conditions?.some((c) => c.type === 'Suspended' && c.status === 'True') && current;
    });
    expect(suspended.status?.conditions?.[0]).toMatchObject({ type: 'Suspended', reason: 'JobSuspended', message: 'Job suspended' });
    expect(suspended.status?.startTime).toBeUndefined();
    expect(await podsOf('paused')).toHaveLength(0);
    await plane.client.patch(RESOURCES.jobs, 'paused', { spec: { suspend: false } }, { namespace: ns, patchType: 'merge' });
    const done = await finished('paused', 'Complete');
    expect(done.status?.conditions?.find((c) => c.type === 'Suspended')).toMatchObject({ status: 'False', reason: 'JobResumed', message: 'Job resumed' });
    expect(done.status?.succeeded).toBe(1);
    await waitFor('the events', async () => {
      const reasons = (await eventsOf('paused')).map((e) => e.reason);
      return ['Suspended', 'Resumed', 'Completed'].every((reason) => reasons.includes(reason));
    });
  });

  it('deletes a finished Job ttlSecondsAfterFinished later, in the foreground', async () => {
    await plane.client.create<Job>(RESOURCES.jobs, job('short-lived', { ttlSecondsAfterFinished: 1 }), ns);
    const done = await finished('short-lived', 'Complete');
    // No garbage collector runs here: the foreground deletion leaves the Job marked, holding its pods.
    const marked = await waitFor('the Job to be marked for deletion', async () => {
      const current = await getJob('short-lived');
      return current.metadata.deletionTimestamp && current;
    });
    expect(marked.metadata.finalizers).toContain('foregroundDeletion');
    expect(Date.parse(marked.metadata.deletionTimestamp!)).toBeGreaterThanOrEqual(Date.parse(done.status!.completionTime!) + 1000);
  });

  it('lets pods of a deleted Job go: the tracking finalizer comes off', async () => {
    await plane.client.create<Job>(RESOURCES.jobs, job('dropped', {}, { 'skiff.io/simulate-run-ms': '60000' }), ns);
    const [pod] = await waitFor('a running pod', async () => {
      const pods = await podsOf('dropped');
      return pods.length === 1 && pods[0]!.status?.phase === 'Running' && pods;
    });
    expect(pod!.metadata.finalizers).toContain(JOB_TRACKING_FINALIZER);
    // While nothing changes, the status settles: no write follows another.
    const settled = await waitFor('active 1, ready 1', async () => {
      const current = await getJob('dropped');
      return current.status?.active === 1 && current.status.ready === 1 && current;
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await getJob('dropped')).metadata.resourceVersion).toBe(settled.metadata.resourceVersion);
    await plane.client.delete(RESOURCES.jobs, 'dropped', ns, { propagationPolicy: 'Orphan' });
    await waitFor('the finalizer to come off', async () => {
      const current = await plane.client.get<Pod>(RESOURCES.pods, pod!.metadata.name!, ns);
      return !current.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER);
    });
  });
});
