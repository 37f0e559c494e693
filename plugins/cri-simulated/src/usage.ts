import { isValidQuantity, parseQuantity } from '@skiff/api';
import type { ContainerStatsInfo, LinuxContainerResources, NodeStatsInfo } from '@skiff/kernel';

/** What a simulated container uses when its pod does not say: a thousandth of a core and 4 MiB. */
export const DEFAULT_SIMULATED_NANOCORES = 1_000_000;
export const DEFAULT_SIMULATED_MEMORY_BYTES = 4 * 1024 * 1024;
/** What the node itself uses besides its pods (the kubelet, the runtime): a tenth of a core and 256 MiB. */
export const NODE_BASE_NANOCORES = 100_000_000;
export const NODE_BASE_MEMORY_BYTES = 256 * 1024 * 1024;

/** A non-negative quantity from an annotation in base units (cores, bytes), or undefined when absent or not one. */
function annotationQuantity(value: string | undefined): number | undefined {
  if (value === undefined || !isValidQuantity(value.trim())) return undefined;
  const parsed = parseQuantity(value.trim());
  return parsed >= 0 ? parsed : undefined;
}

/** What a running simulated container uses: a steady CPU rate and memory, from its pod's annotations and its limits. */
export interface SimulatedUsage {
  nanoCores: number;
  memoryBytes: number;
}

/**
 * The steady usage of a container: the pod's `skiff.io/simulate-cpu` and `skiff.io/simulate-memory` (quantities, each
 * container of the pod uses that much; defaults 1m and 4Mi), never above the container's CPU limit (its CFS quota) or
 * memory limit, as the kernel would hold a real process there.
 */
export function simulatedUsage(cpu: string | undefined, memory: string | undefined, resources: LinuxContainerResources | undefined): SimulatedUsage {
  let nanoCores = Math.round((annotationQuantity(cpu) ?? DEFAULT_SIMULATED_NANOCORES / 1e9) * 1e9);
  let memoryBytes = Math.round(annotationQuantity(memory) ?? DEFAULT_SIMULATED_MEMORY_BYTES);
  const { cpuQuota, cpuPeriod, memoryLimitInBytes } = resources ?? {};
  if (cpuQuota && cpuQuota > 0 && cpuPeriod && cpuPeriod > 0) nanoCores = Math.min(nanoCores, Math.round((cpuQuota / cpuPeriod) * 1e9));
  if (memoryLimitInBytes && memoryLimitInBytes > 0) memoryBytes = Math.min(memoryBytes, memoryLimitInBytes);
  return { nanoCores, memoryBytes };
}

/** A running container's figures at `nowMs`: CPU time is its rate integrated over the time it has run. */
export function simulatedStats(
  container: Pick<ContainerStatsInfo, 'id' | 'podSandboxId' | 'metadata' | 'labels'>,
  startedAtMs: number,
  usage: SimulatedUsage,
  nowMs: number,
): ContainerStatsInfo {
  const ranSeconds = Math.max(0, nowMs - startedAtMs) / 1000;
  return {
    ...{},
    ...container,
    timestampMs: nowMs,
    cpuCoreNanoSeconds: Math.round(usage.nanoCores * ranSeconds),
    memoryWorkingSetBytes: usage.memoryBytes,
    memoryUsageBytes: usage.memoryBytes,
    memoryRssBytes: usage.memoryBytes,
  };
}

/**
 * The node's figures: its base usage since `bootMs` plus the CPU time every container has used (running ones and the
 * ones that ended, so the counter never goes back), and the base memory plus the running containers'.
 */
export function simulatedNodeStats(bootMs: number, nowMs: number, containerCpuNanoSeconds: number, runningMemoryBytes: number): NodeStatsInfo {
  const baseCpu = Math.round(NODE_BASE_NANOCORES * (Math.max(0, nowMs - bootMs) / 1000));
  const workingSet = NODE_BASE_MEMORY_BYTES + runningMemoryBytes;
  return { timestampMs: nowMs, cpuCoreNanoSeconds: baseCpu + containerCpuNanoSeconds, memoryWorkingSetBytes: workingSet, memoryUsageBytes: workingSet };
}
