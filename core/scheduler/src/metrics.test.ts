import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Node, type Pod } from '@skiff/api';
import { createMetricsRegistry, gatherMetrics, type ApiClient, type Registry } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import schedulerPlugin from './index.js';
import { SchedulerMetrics } from './metrics.js';
import { SchedulingQueue } from './queue/scheduling-queue.js';
import { makeNode } from './test-support/objects.js';

/** The value of `name`'s series whose labels include `labels`, as a scrape of `registry` shows it. */
async function value(registry: Registry, name: string, labels: Record<string, string | number> = {}): Promise<number | undefined> {
  for (const metric of await (await gatherMetrics(registry)).getMetricsAsJSON()) {
    for (const series of metric.values as { metricName?: string; labels: Record<string, string | number>; value: number }[]) {
      if ((series.metricName ?? metric.name) !== name) continue;
      if (Object.entries(labels).every(([key, wanted]) => series.labels[key] === wanted)) return series.value;
    }
  }
  return undefined;
}

describe('SchedulerMetrics', () => {
  it("records attempts by result and profile in kube-scheduler's buckets, and the time to schedule by attempts", async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const metrics = new SchedulerMetrics(registry);
    metrics.attempt('unschedulable', 'default-scheduler', 0.003);
    metrics.attempt('scheduled', 'default-scheduler', 0.0015);
    metrics.attempt('scheduled', 'default-scheduler', 0.02);
    metrics.scheduled(2, 0.5);
    expect(await value(registry, 'scheduler_schedule_attempts_total', { result: 'scheduled', profile: 'default-scheduler' })).toBe(2);
    expect(await value(registry, 'scheduler_schedule_attempts_total', { result: 'unschedulable', profile: 'default-scheduler' })).toBe(1);
    // 1 ms × 2ⁿ: 0.0015 falls in le=0.002, 0.02 in le=0.032; the last bound is 16.384 s.
    const bucket = (le: number | string) =>
      value(registry, 'scheduler_scheduling_attempt_duration_seconds_bucket', { result: 'scheduled', profile: 'default-scheduler', le });
    expect(await bucket(0.001)).toBe(0);
    expect(await bucket(0.002)).toBe(1);
    expect(await bucket(0.032)).toBe(2);
    expect(await bucket(16.384)).toBe(2);
    expect(await value(registry, 'scheduler_pod_scheduling_sli_duration_seconds_count', { attempts: '2' })).toBe(1);
    expect(await value(registry, 'scheduler_pod_scheduling_sli_duration_seconds_bucket', { attempts: '2', le: 0.64 })).toBe(1);
  });

  it('sums every queue it was given into scheduler_pending_pods, all four queues always present', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const metrics = new SchedulerMetrics(registry);
    const stopOne = metrics.pending(() => ({ active: 1, backoff: 2, unschedulable: 0, gated: 0 }));
    metrics.pending(() => ({ active: 0, backoff: 1, unschedulable: 3, gated: 0 }));
    expect(await value(registry, 'scheduler_pending_pods', { queue: 'active' })).toBe(1);
    expect(await value(registry, 'scheduler_pending_pods', { queue: 'backoff' })).toBe(3);
    expect(await value(registry, 'scheduler_pending_pods', { queue: 'unschedulable' })).toBe(3);
    expect(await value(registry, 'scheduler_pending_pods', { queue: 'gated' })).toBe(0);
    stopOne();
    expect(await value(registry, 'scheduler_pending_pods', { queue: 'active' })).toBe(0);
  });
});

describe('SchedulingQueue.counts', () => {
  it('counts each place a pod waits in, as scheduler_pending_pods names them; pods being scheduled are not pending', async () => {
    const queue = new SchedulingQueue({ gate: (pod) => (pod.spec.schedulingGates?.length ? 'SchedulingGates' : undefined), backoffInitialMs: 60_000 });
    const pod = (name: string, gated = false): Pod => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: { containers: [], ...(gated ? { schedulingGates: [{ name: 'example.com/wait' }] } : {}) },
    });
    for (const name of ['a', 'b', 'c']) queue.add(`default/${name}`, pod(name));
    queue.add('default/held', pod('held', true));
    expect(queue.counts()).toEqual({ active: 3, backoff: 0, unschedulable: 0, gated: 1 });
    const first = (await queue.pop())!;
    queue.requeueUnschedulable(first.info.key, first.cycle);
    const second = (await queue.pop())!;
    queue.requeueAfterError(second.info.key);
    await queue.pop();
    expect(queue.counts()).toEqual({ active: 0, backoff: 1, unschedulable: 1, gated: 1 });
    queue.close();
  });
});

describe("the scheduler's metrics on a real API server", () => {
  let controlPlane: ControlPlane;
  let client: ApiClient;
  let registry: Registry;
  beforeAll(async () => {
    controlPlane = await startControlPlane([schedulerPlugin], { config: { logLevel: 'silent' } });
    client = controlPlane.client;
    registry = controlPlane.kernel.resolve('metrics');
  });
  afterAll(() => controlPlane?.stop());

  const createPod = (name: string) =>
    client.create<Pod>(
      RESOURCES.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'default' },
        spec: { containers: [{ name: 'c', image: 'nginx' }] },
      },
      'default',
    );

  it('counts an unschedulable attempt, then a scheduled one, and reports the pod parked while it waits', async () => {
    await createPod('lonely');
    await waitFor('an unschedulable attempt', async () => (await value(registry, 'scheduler_schedule_attempts_total', { result: 'unschedulable' })) === 1);
    expect(await value(registry, 'scheduler_schedule_attempts_total', { result: 'unschedulable', profile: 'default-scheduler' })).toBe(1);
    expect(await waitFor('lonely parked', async () => (await value(registry, 'scheduler_pending_pods', { queue: 'unschedulable' })) === 1)).toBe(true);

    await client.create<Node>(RESOURCES.nodes, makeNode('node-a'));
    await waitFor('lonely bound', async () => (await client.get<Pod>(RESOURCES.pods, 'lonely', 'default')).spec.nodeName);
    await waitFor('a scheduled attempt', async () => (await value(registry, 'scheduler_schedule_attempts_total', { result: 'scheduled' })) === 1);
    expect(await value(registry, 'scheduler_scheduling_attempt_duration_seconds_count', { result: 'scheduled', profile: 'default-scheduler' })).toBe(1);
    expect(await value(registry, 'scheduler_pod_scheduling_sli_duration_seconds_count', { attempts: '2' })).toBe(1);
    expect(await value(registry, 'scheduler_pending_pods', { queue: 'unschedulable' })).toBe(0);
  });
});
