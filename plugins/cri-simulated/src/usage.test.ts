import { describe, expect, it } from 'vitest';
import { SimulatedRuntime } from './runtime.js';
import { DEFAULT_SIMULATED_MEMORY_BYTES, DEFAULT_SIMULATED_NANOCORES, simulatedNodeStats, simulatedStats, simulatedUsage } from './usage.js';

describe('simulatedUsage', () => {
  it('takes skiff.io/simulate-cpu and skiff.io/simulate-memory as quantities', () => {
    expect(simulatedUsage('250m', '64Mi', undefined)).toEqual({ nanoCores: 250_000_000, memoryBytes: 64 * 1024 * 1024 });
    expect(simulatedUsage('1.5', '1G', undefined)).toEqual({ nanoCores: 1_500_000_000, memoryBytes: 1_000_000_000 });
  });

  it('defaults to 1m and 4Mi, also for values that are not quantities', () => {
    const defaults = { nanoCores: DEFAULT_SIMULATED_NANOCORES, memoryBytes: DEFAULT_SIMULATED_MEMORY_BYTES };
    expect(simulatedUsage(undefined, undefined, undefined)).toEqual(defaults);
    expect(simulatedUsage('lots', '-5Mi', undefined)).toEqual(defaults);
    expect(defaults).toEqual({ nanoCores: 1_000_000, memoryBytes: 4 * 1024 * 1024 });
  });

  it("is held at the container's limits: its CFS quota (cpu) and memory limit", () => {
    const limited = { cpuQuota: 20_000, cpuPeriod: 100_000, memoryLimitInBytes: 32 * 1024 * 1024 };
    expect(simulatedUsage('750m', '1Gi', limited)).toEqual({ nanoCores: 200_000_000, memoryBytes: 32 * 1024 * 1024 });
    expect(simulatedUsage('100m', '8Mi', limited)).toEqual({ nanoCores: 100_000_000, memoryBytes: 8 * 1024 * 1024 });
  });
});

describe('simulatedStats and simulatedNodeStats', () => {
  const container = { id: 'c', metadata: { name: 'app', attempt: 0 } };

  it('integrates the rate: 250m for 4 s is 1 s of CPU time', () => {
    const stats = simulatedStats(container, 10_000, { nanoCores: 250_000_000, memoryBytes: 1024 }, 14_000);
    expect(stats).toMatchObject({ timestampMs: 14_000, cpuCoreNanoSeconds: 1_000_000_000, memoryWorkingSetBytes: 1024 });
  });

  it('the node is a base of 100m and 256Mi plus its containers', () => {
    expect(simulatedNodeStats(0, 2000, 5e8, 1024)).toMatchObject({ cpuCoreNanoSeconds: 2e8 + 5e8, memoryWorkingSetBytes: 256 * 1024 * 1024 + 1024 });
  });
});

describe('SimulatedRuntime stats', () => {
  it("lists running containers only, with their pod's annotations, and the node's counter keeps ended containers' CPU time", async () => {
    const runtime = new SimulatedRuntime();
    const sandboxConfig = { metadata: { name: 'p', namespace: 'default', uid: 'u', attempt: 0 }, annotations: { 'skiff.io/simulate-cpu': '2' } };
    const sandbox = await runtime.runPodSandbox(sandboxConfig);
    await runtime.pullImage('busybox');
    const id = await runtime.createContainer(
      sandbox,
      { metadata: { name: 'app', attempt: 0 }, image: { image: 'busybox' }, labels: { 'io.kubernetes.container.name': 'app' } },
      sandboxConfig,
    );
    expect(await runtime.listContainerStats()).toEqual([]);
    await runtime.startContainer(id);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [stats] = await runtime.listContainerStats();
    expect(stats).toMatchObject({ id, podSandboxId: sandbox, metadata: { name: 'app' }, labels: { 'io.kubernetes.container.name': 'app' } });
    // 2 cores for at least 50 ms.
    expect(stats!.cpuCoreNanoSeconds).toBeGreaterThanOrEqual(100_000_000);
    await runtime.stopContainer(id, 0);
    expect(await runtime.listContainerStats()).toEqual([]);
    const before = (await runtime.nodeStats()).cpuCoreNanoSeconds;
    expect(before).toBeGreaterThanOrEqual(stats!.cpuCoreNanoSeconds!);
    expect((await runtime.nodeStats()).memoryWorkingSetBytes).toBe(256 * 1024 * 1024);
    await runtime.close();
  });
});
