import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMetricsRegistry, gatherMetrics, type ContainerRuntime, type Registry } from '@skiff/kernel';
import { KubeletMetrics } from './metrics.js';
import { namingFailures } from './plugin-failures.js';
import { CRI_LABELS } from './names.js';
import { simulatedRuntime } from './test-support/node-parts.js';
import { silentLogger } from './test-support/objects.js';

let dataDir: string;
let created: ContainerRuntime;
let registry: Registry;
let runtime: ContainerRuntime;
let metrics: KubeletMetrics;
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'skiff-kubelet-metrics-'));
  created = await simulatedRuntime(dataDir);
  registry = createMetricsRegistry({ defaultMetrics: false });
  metrics = new KubeletMetrics(registry);
  runtime = namingFailures(created, { kind: 'container runtime', name: 'simulated' }, silentLogger, metrics);
});
afterEach(async () => {
  await created.close?.();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A pod with `containers` through the counting runtime; `start` false leaves them created. */
async function runPod(name: string, containers: string[], start = true): Promise<string> {
  const labels = { [CRI_LABELS.POD_NAME]: name, [CRI_LABELS.POD_NAMESPACE]: 'default', [CRI_LABELS.POD_UID]: `uid-${name}` };
  const sandboxConfig = { metadata: { name, namespace: 'default', uid: `uid-${name}`, attempt: 0 }, labels, annotations: {} };
  const sandbox = await runtime.runPodSandbox(sandboxConfig);
  await runtime.pullImage('busybox');
  for (const container of containers) {
    const id = await runtime.createContainer(
      sandbox,
      { metadata: { name: container, attempt: 0 }, image: { image: 'busybox' }, labels: { ...labels, [CRI_LABELS.CONTAINER_NAME]: container } },
      sandboxConfig,
    );
    if (start) await runtime.startContainer(id);
  }
  return sandbox;
}

/** The value of `name`'s series whose labels include `labels`, as a scrape shows it. */
async function value(name: string, labels: Record<string, string | number> = {}): Promise<number | undefined> {
  const all = await (await gatherMetrics(registry)).getMetricsAsJSON();
  for (const metric of all) {
    for (const series of metric.values as { metricName?: string; labels: Record<string, string | number>; value: number }[]) {
      if ((series.metricName ?? metric.name) !== name) continue;
      if (Object.entries(labels).every(([key, wanted]) => series.labels[key] === wanted)) return series.value;
    }
  }
  return undefined;
}

describe('kubelet runtime operation metrics', () => {
  it('counts and times every CRI call by upstream operation_type, and its failures', async () => {
    await runPod('web', ['app', 'sidecar']);
    expect(await value('kubelet_runtime_operations_total', { operation_type: 'run_podsandbox' })).toBe(1);
    expect(await value('kubelet_runtime_operations_total', { operation_type: 'create_container' })).toBe(2);
    expect(await value('kubelet_runtime_operations_total', { operation_type: 'start_container' })).toBe(2);
    expect(await value('kubelet_runtime_operations_total', { operation_type: 'pull_image' })).toBe(1);
    expect(await value('kubelet_runtime_operations_duration_seconds_count', { operation_type: 'start_container' })).toBe(2);
    expect(await value('kubelet_runtime_operations_duration_seconds_bucket', { operation_type: 'start_container', le: '+Inf' })).toBe(2);
    expect(await value('kubelet_runtime_operations_errors_total', { operation_type: 'start_container' })).toBe(0);

    await expect(runtime.startContainer('no-such-container')).rejects.toThrow();
    expect(await value('kubelet_runtime_operations_total', { operation_type: 'start_container' })).toBe(3);
    expect(await value('kubelet_runtime_operations_errors_total', { operation_type: 'start_container' })).toBe(1);
  });

  it('leaves calls outside the CRI list uncounted', async () => {
    await runtime.version();
    await runtime.listContainerStats?.();
    const all = await registry.getMetricsAsJSON();
    const types = all
      .filter((metric) => metric.name === 'kubelet_runtime_operations_total')
      .flatMap((metric) => metric.values.map((series) => series.labels.operation_type));
    expect(types.sort()).toEqual(['list_container_stats', 'version']);
    expect(await value('kubelet_runtime_operations_total', { operation_type: 'close' })).toBeUndefined();
  });
});

describe('kubelet running pods and containers', () => {
  it('counts ready sandboxes and containers by state at scrape time, from the runtime itself', async () => {
    const stop = metrics.countRunning(created);
    await runPod('one', ['app']);
    const two = await runPod('two', ['app', 'waiting'], false);
    expect(await value('kubelet_running_pods')).toBe(2);
    expect(await value('kubelet_running_containers', { container_state: 'running' })).toBe(1);
    expect(await value('kubelet_running_containers', { container_state: 'created' })).toBe(2);
    expect(await value('kubelet_running_containers', { container_state: 'exited' })).toBe(0);
    const listed = await value('kubelet_runtime_operations_total', { operation_type: 'list_podsandbox' });
    expect(listed).toBeUndefined();

    await runtime.stopPodSandbox(two);
    expect(await value('kubelet_running_pods')).toBe(1);
    stop();
    expect(await value('kubelet_running_pods')).toBe(0);
  });

  it('observes pod start durations in upstream buckets', async () => {
    metrics.podStarted(1.5);
    metrics.podStarted(40);
    expect(await value('kubelet_pod_start_duration_seconds_count')).toBe(2);
    expect(await value('kubelet_pod_start_duration_seconds_bucket', { le: 2 })).toBe(1);
    expect(await value('kubelet_pod_start_duration_seconds_bucket', { le: 45 })).toBe(2);
    expect(await value('kubelet_pod_start_duration_seconds_sum')).toBe(41.5);
  });
});
