import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContainerRuntime } from '@skiff/kernel';
import { CRI_LABELS } from '../names.js';
import { simulatedRuntime, withMethods } from '../test-support/node-parts.js';
import { silentLogger } from '../test-support/objects.js';
import { resourceMetricsText } from './resource-metrics.js';
import { UsageSampler } from './sampler.js';
import { resourceUsageOf } from './usage.js';
import { statsSummary } from '../server/summary.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let dataDir: string;
let runtime: ContainerRuntime;
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'skiff-sampler-'));
  runtime = await simulatedRuntime(dataDir);
});
afterEach(async () => {
  await runtime.close?.();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A running pod of the simulated runtime, labelled as the kubelet labels it. */
async function runPod(name: string, annotations: Record<string, string>, containers: string[]): Promise<string[]> {
  const labels = { [CRI_LABELS.POD_NAME]: name, [CRI_LABELS.POD_NAMESPACE]: 'default', [CRI_LABELS.POD_UID]: `uid-${name}` };
  const sandboxConfig = { metadata: { name, namespace: 'default', uid: `uid-${name}`, attempt: 0 }, labels, annotations };
  const sandbox = await runtime.runPodSandbox(sandboxConfig);
  await runtime.pullImage('busybox');
  const ids: string[] = [];
  for (const container of containers) {
    const id = await runtime.createContainer(
      sandbox,
      { metadata: { name: container, attempt: 0 }, image: { image: 'busybox' }, labels: { ...labels, [CRI_LABELS.CONTAINER_NAME]: container } },
      sandboxConfig,
    );
    await runtime.startContainer(id);
    ids.push(id);
  }
  return ids;
}

describe('UsageSampler on the simulated runtime', () => {
  it('reads a pod of skiff.io/simulate-cpu 250m back as 250,000,000 nanocores once it has two readings', async () => {
    await runPod('busy', { 'skiff.io/simulate-cpu': '250m', 'skiff.io/simulate-memory': '64Mi' }, ['app', 'sidecar']);
    const sampler = new UsageSampler({ runtime, periodMs: 60_000, logger: silentLogger });
    await sampler.sample();
    expect(resourceUsageOf('node-1', sampler.snapshot()).pods).toEqual([]);
    await sleep(200);
    await sampler.sample();
    const usage = resourceUsageOf('node-1', sampler.snapshot());
    expect(usage.pods).toHaveLength(1);
    for (const container of usage.pods[0]!.containers) {
      expect(container.cpuNanoCores).toBeGreaterThanOrEqual(249_000_000);
      expect(container.cpuNanoCores).toBeLessThanOrEqual(251_000_000);
      expect(container.memoryWorkingSetBytes).toBe(64 * 1024 * 1024);
      expect(container.windowSeconds).toBeGreaterThan(0.15);
    }
    expect(usage.node!.memoryWorkingSetBytes).toBe(256 * 1024 * 1024 + 2 * 64 * 1024 * 1024);
    // The node: 100m of its own plus the pod's two containers.
    expect(usage.node!.cpuNanoCores).toBeGreaterThanOrEqual(595_000_000);
    expect(usage.node!.cpuNanoCores).toBeLessThanOrEqual(605_000_000);
  });

  it('forgets containers that stopped, and keeps the previous figures (saying so in scrape_error) while readings fail', async () => {
    const [id] = await runPod('short', {}, ['app']);
    let failing = false;
    const flaky = withMethods(runtime, {
      listContainerStats: () => (failing ? Promise.reject(new Error('runtime gone')) : runtime.listContainerStats!()),
    });
    const sampler = new UsageSampler({ runtime: flaky, periodMs: 60_000, logger: silentLogger });
    await sampler.sample();
    await sleep(20);
    await sampler.sample();
    expect(sampler.snapshot().containers).toHaveLength(1);
    failing = true;
    await sampler.sample();
    expect(sampler.snapshot()).toMatchObject({ failed: true, containers: [{ container: 'app' }] });
    expect(resourceMetricsText(sampler.snapshot())).toMatch(/^scrape_error 1$/m);
    failing = false;
    await runtime.stopContainer(id!, 0);
    await sampler.sample();
    expect(sampler.snapshot()).toMatchObject({ failed: false, containers: [] });
  });

  it('fills the stats Summary with upstream field names, and /metrics/resource with cumulative seconds', async () => {
    await runPod('web', { 'skiff.io/simulate-cpu': '0.5' }, ['app']);
    const sampler = new UsageSampler({ runtime, periodMs: 60_000, logger: silentLogger });
    await sampler.sample();
    await sleep(100);
    await sampler.sample();
    const pod = {
      metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
      status: { startTime: '2026-01-01T00:00:00Z', containerStatuses: [{ name: 'app', state: { running: { startedAt: '2026-01-01T00:00:01Z' } } }] },
    };
    const summary = statsSummary('node-1', new Date('2026-01-01T00:00:00Z'), [pod as never], sampler.snapshot());
    const container = summary.pods[0]!.containers[0]!;
    expect(container.cpu!.usageNanoCores).toBeGreaterThan(490_000_000);
    expect(container.cpu!.usageCoreNanoSeconds).toBeGreaterThan(0);
    expect(container.memory).toMatchObject({ workingSetBytes: 4 * 1024 * 1024, usageBytes: 4 * 1024 * 1024, rssBytes: 4 * 1024 * 1024 });
    expect(summary.pods[0]!.cpu!.usageNanoCores).toBe(container.cpu!.usageNanoCores);
    expect(summary.node.cpu!.usageNanoCores).toBeGreaterThan(590_000_000);
    expect(summary.node.memory!.workingSetBytes).toBe(260 * 1024 * 1024);

    const text = resourceMetricsText(sampler.snapshot());
    expect(text).toMatch(/^# TYPE container_cpu_usage_seconds_total counter$/m);
    expect(text).toMatch(/^container_cpu_usage_seconds_total\{container="app",namespace="default",pod="web"\} [\d.e-]+ \d{13}$/m);
    expect(text).toMatch(/^container_memory_working_set_bytes\{container="app",namespace="default",pod="web"\} 4194304 \d{13}$/m);
    expect(text).toMatch(/^pod_cpu_usage_seconds_total\{namespace="default",pod="web"\} /m);
    expect(text).toMatch(/^node_memory_working_set_bytes 272629760 \d{13}$/m);
    expect(text).toMatch(/^scrape_error 0$/m);
  });
});
