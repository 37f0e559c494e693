import { RESOURCES, type CronJob, type CronJobSpec, type Event, type Job, type Node } from '@skiff/api';
import { trackWork } from '@skiff/controller-manager';
import { definePlugin } from '@skiff/kernel';
import kubelet from '@skiff/kubelet';
import criSimulated from '@skiff/plugin-cri-simulated';
import networkIpam from '@skiff/plugin-network-ipam';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import scheduler from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CronJobController } from './cronjob-controller.js';
import jobController from './index.js';
import { JOB_LABEL } from './names.js';

// The CronJob controller on a clock the test moves, with the real Job controller, scheduler and simulated
// kubelets running the Jobs it starts (containers exit after 200 ms).

const ns = 'default';
const MINUTE = 60_000;
const WAIT = { timeoutMs: 20_000 };
let plane: ControlPlane;
let clock = Date.now();
let cronJobs: CronJobController | undefined;

/** Registers a CronJob controller reading `clock`; the plugin's own `cronjob` controller is disabled. */
const movableClockCronJobs = definePlugin({
  name: 'test-cronjob-clock',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.controllers.tap('test-cronjob-clock', (registry) =>
      registry.register({
        name: 'cronjob-on-a-test-clock',
        start(ctx) {
          cronJobs = new CronJobController(ctx, { now: () => clock, defaultTimeZone: 'UTC' });
          trackWork(ctx, cronJobs.run(2));
        },
      }),
    );
  },
});

beforeAll(async () => {
  plane = await startControlPlane(
    [jobController, movableClockCronJobs, scheduler, resourcesFit, [kubelet, { heartbeatSeconds: 1 }], [criSimulated, { runMs: 200 }], networkIpam],
    { config: { nodes: 1, logLevel: 'silent' }, enabled: ['*', '-cronjob'] },
  );
  await waitFor('a node', async () => (await plane.client.list<Node>(RESOURCES.nodes)).items.length === 1, WAIT);
});
afterAll(async () => {
  await plane?.stop();
});

async function createCronJob(name: string, spec: Partial<CronJobSpec> = {}, annotations?: Record<string, string>): Promise<CronJob> {
  const cronJob: CronJob = {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: ns },
    spec: {
      schedule: '*/1 * * * *',
      jobTemplate: {
        metadata: { labels: { cron: name } },
        spec: {
          template: {
            metadata: annotations ? { annotations } : {},
            spec: { restartPolicy: 'Never', containers: [{ name: 'tick', image: 'busybox:1.36' }] },
          },
        },
      },
      ...spec,
    },
  };
  const created = await plane.client.create<CronJob>(RESOURCES.cronjobs, cronJob, ns);
  // Start every test from the moment the CronJob was made: nothing is due yet.
  clock = Date.parse(created.metadata.creationTimestamp!);
  return created;
}

/** Moves the clock to `seconds` past the `minutes`-th minute boundary after now, and lets the controller look. */
function moveTo(minutes: number, seconds = 1): number {
  const boundary = Math.floor(clock / MINUTE) * MINUTE + minutes * MINUTE;
  clock = boundary + seconds * 1000;
  cronJobs!.resyncAll();
  return boundary;
}

const getCronJob = (name: string) => plane.client.get<CronJob>(RESOURCES.cronjobs, name, ns);
const jobsOf = async (name: string) =>
  (await plane.client.list<Job>(RESOURCES.jobs, ns, { labelSelector: `cron=${name}` })).items.filter((job) => !job.metadata.deletionTimestamp);
const jobNames = async (name: string) => (await jobsOf(name)).map((job) => job.metadata.name).sort();
const eventsOf = async (name: string) =>
  (await plane.client.list<Event>(RESOURCES.events, ns)).items
    .filter((e) => e.involvedObject.kind === 'CronJob' && e.involvedObject.name === name)
    .map((e) => `${e.reason}: ${e.message}`);
const complete = (job: Job) => job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True');

describe('CronJob controller on a moved clock', () => {
  it('starts a Job at each scheduled minute, only the latest of missed ones, and keeps the history limit', async () => {
    const cronJob = await createCronJob('ticker', { successfulJobsHistoryLimit: 2 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await jobsOf('ticker')).toEqual([]);

    const first = moveTo(1);
    const [job] = await waitFor('the first job', async () => {
      const jobs = await jobsOf('ticker');
      return jobs.length === 1 && jobs;
    });
    expect(job!.metadata.name).toBe(`ticker-${first / MINUTE}`);
    expect(job!.metadata.annotations?.[JOB_LABEL.CRONJOB_SCHEDULED_TIMESTAMP]).toBe(new Date(first).toISOString().replace('.000Z', 'Z'));
    expect(job!.metadata.ownerReferences).toEqual([
      { apiVersion: 'batch/v1', kind: 'CronJob', name: 'ticker', uid: cronJob.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    const scheduled = await waitFor('status.active and lastScheduleTime', async () => {
      const current = await getCronJob('ticker');
      return current.status?.active?.length === 1 && current;
    });
    expect(scheduled.status?.active?.[0]).toMatchObject({ kind: 'Job', name: job!.metadata.name, uid: job!.metadata.uid });
    expect(scheduled.status?.lastScheduleTime).toBe(new Date(first).toISOString().replace('.000Z', 'Z'));

    const succeeded = await waitFor(
      'the job to complete and leave status.active',
      async () => {
        const current = await getCronJob('ticker');
        return !current.status?.active && current.status?.lastSuccessfulTime && current;
      },
      WAIT,
    );
    expect(Date.parse(succeeded.status!.lastSuccessfulTime!)).toBeGreaterThan(0);
    await waitFor('the events', async () => {
      const events = await eventsOf('ticker');
      return (
        events.includes(`SuccessfulCreate: Created job ${job!.metadata.name}`) &&
        events.includes(`SawCompletedJob: Saw completed job: ${job!.metadata.name}, condition: Complete`)
      );
    });

    // Three minutes pass unseen: one Job, for the latest of them.
    const latest = moveTo(3);
    await waitFor('the job for the latest missed minute', async () => (await jobNames('ticker')).includes(`ticker-${latest / MINUTE}`), WAIT);
    expect(await jobNames('ticker')).toEqual([`ticker-${first / MINUTE}`, `ticker-${latest / MINUTE}`].sort());
    await waitFor('both complete', async () => (await jobsOf('ticker')).every(complete), WAIT);

    // A third success: the oldest goes.
    const third = moveTo(1);
    await waitFor(
      'two jobs kept',
      async () => {
        const names = await jobNames('ticker');
        const jobs = await jobsOf('ticker');
        return names.join() === [`ticker-${latest / MINUTE}`, `ticker-${third / MINUTE}`].sort().join() && jobs.every(complete);
      },
      WAIT,
    );
    await waitFor('the deletion event', async () => (await eventsOf('ticker')).includes(`SuccessfulDelete: Deleted job ticker-${first / MINUTE}`));
  });

  it('Forbid skips a start while a Job still runs; Replace deletes the running Job and starts a new one', async () => {
    const long = { 'skiff.io/simulate-run-ms': '600000' };
    await createCronJob('forbid', { concurrencyPolicy: 'Forbid' }, long);
    await createCronJob('replace', { concurrencyPolicy: 'Replace' }, long);
    const first = moveTo(1);
    await waitFor('one job each', async () => (await jobsOf('forbid')).length === 1 && (await jobsOf('replace')).length === 1, WAIT);
    await waitFor(
      'both listed as active',
      async () => (await getCronJob('forbid')).status?.active?.length === 1 && (await getCronJob('replace')).status?.active?.length === 1,
    );
    const second = moveTo(1);
    await waitFor('the replacement', async () => (await jobNames('replace')).join() === `replace-${second / MINUTE}`, WAIT);
    await waitFor('the deletion event', async () => (await eventsOf('replace')).includes(`SuccessfulDelete: Deleted job replace-${first / MINUTE}`));
    await waitFor('JobAlreadyActive', async () =>
      (await eventsOf('forbid')).includes('JobAlreadyActive: Not starting job because prior execution is running and concurrency policy is Forbid'),
    );
    expect(await jobNames('forbid')).toEqual([`forbid-${first / MINUTE}`]);
    const replaced = await waitFor('the new job active', async () => {
      const current = await getCronJob('replace');
      return current.status?.active?.[0]?.name === `replace-${second / MINUTE}` && current;
    });
    expect(replaced.status?.active).toHaveLength(1);
  });

  it('starts nothing while suspended, nor past the starting deadline', async () => {
    await createCronJob('held', { suspend: true });
    await createCronJob('deadline', { startingDeadlineSeconds: 10 });
    // Thirty seconds past the boundary: the start time is 30 s ago, beyond the 10 s deadline.
    moveTo(2, 30);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await jobsOf('held')).toEqual([]);
    expect(await jobsOf('deadline')).toEqual([]);
    expect((await getCronJob('deadline')).status?.lastScheduleTime).toBeUndefined();
    // Within the deadline it starts.
    const boundary = moveTo(1, 5);
    await waitFor('a job within the deadline', async () => (await jobNames('deadline')).join() === `deadline-${boundary / MINUTE}`, WAIT);
    await plane.client.patch(RESOURCES.cronjobs, 'held', { spec: { suspend: false } }, { namespace: ns, patchType: 'merge' });
    const resumed = moveTo(1);
    await waitFor('the resumed cron job to start one', async () => (await jobNames('held')).join() === `held-${resumed / MINUTE}`, WAIT);
  });
});
