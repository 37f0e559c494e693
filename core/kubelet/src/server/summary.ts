import type { Pod } from '@skiff/api';
import type { ContainerStatsInfo, NodeStatsInfo } from '@skiff/kernel';
import { cpuRate, rfc3339, type SamplePair, type UsageSnapshot } from '../stats/usage.js';

/**
 * The kubelet's stats Summary (stats/v1alpha1, `/stats/summary`) with what this kubelet knows: the node's name and
 * start, each pod it started with its running containers, and, once the usage sampler has read them, CPU and memory
 * of the node, the pods and their containers (upstream's field names). File system and network figures are left out
 * rather than made up; clients treat absent figures as unknown.
 */
export interface StatsSummary {
  node: { nodeName: string; startTime: string; cpu?: CpuStats; memory?: MemoryStats };
  pods: PodStats[];
}

export interface PodStats {
  podRef: { name: string; namespace: string; uid: string };
  startTime?: string;
  containers: ContainerStats[];
  cpu?: CpuStats;
  memory?: MemoryStats;
}

export interface ContainerStats {
  name: string;
  startTime: string;
  cpu?: CpuStats;
  memory?: MemoryStats;
}

/** stats/v1alpha1 CPUStats: `usageNanoCores` over the last window, `usageCoreNanoSeconds` since the start. */
export interface CpuStats {
  time: string;
  usageNanoCores?: number;
  usageCoreNanoSeconds?: number;
}

/** stats/v1alpha1 MemoryStats. */
export interface MemoryStats {
  time: string;
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
  rssBytes?: number;
}

/** A time as Kubernetes writes object times (RFC 3339, whole seconds). */
function wholeSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

type Reading = ContainerStatsInfo | NodeStatsInfo;

function cpuOf(pair: SamplePair<Reading>): CpuStats | undefined {
  const { newer } = pair;
  if (newer.cpuCoreNanoSeconds === undefined) return undefined;
  const rate = pair.older && cpuRate(pair.older, newer);
  return { time: rfc3339(newer.timestampMs), ...(rate ? { usageNanoCores: rate.nanoCores } : {}), usageCoreNanoSeconds: newer.cpuCoreNanoSeconds };
}

function memoryOf(reading: Reading): MemoryStats | undefined {
  if (reading.memoryWorkingSetBytes === undefined) return undefined;
  const stats: MemoryStats = { time: rfc3339(reading.timestampMs), workingSetBytes: reading.memoryWorkingSetBytes };
  if (reading.memoryUsageBytes !== undefined) stats.usageBytes = reading.memoryUsageBytes;
  if ('memoryRssBytes' in reading && reading.memoryRssBytes !== undefined) stats.rssBytes = reading.memoryRssBytes;
  if ('memoryAvailableBytes' in reading && reading.memoryAvailableBytes !== undefined) stats.availableBytes = reading.memoryAvailableBytes;
  return stats;
}

function usageOf(pair: SamplePair<Reading> | undefined): { cpu?: CpuStats; memory?: MemoryStats } {
  if (!pair) return {};
  const cpu = cpuOf(pair);
  const memory = memoryOf(pair.newer);
  return { ...{}, ...(cpu ? { cpu } : {}), ...(memory ? { memory } : {}) };
}

/** A pod's figures: the sums of its containers' (the newest of their times). */
function podUsage(containers: ContainerStats[]): { cpu?: CpuStats; memory?: MemoryStats } {
  const cpus = containers.flatMap((container) => (container.cpu ? [container.cpu] : []));
  const memories = containers.flatMap((container) => (container.memory ? [container.memory] : []));
  const latest = (times: string[]) => times.reduce((a, b) => (a > b ? a : b));
  const sum = (values: (number | undefined)[]) => (values.every((value) => value !== undefined) ? values.reduce((a, b) => a! + b!, 0) : undefined);
  const result: { cpu?: CpuStats; memory?: MemoryStats } = {};
  if (cpus.length) {
    const nanoCores = sum(cpus.map((cpu) => cpu.usageNanoCores));
    result.cpu = {
      time: latest(cpus.map((cpu) => cpu.time)),
      ...(nanoCores !== undefined ? { usageNanoCores: nanoCores } : {}),
      usageCoreNanoSeconds: sum(cpus.map((cpu) => cpu.usageCoreNanoSeconds)) ?? 0,
    };
  }
  if (memories.length)
    result.memory = { time: latest(memories.map((memory) => memory.time)), workingSetBytes: sum(memories.map((m) => m.workingSetBytes)) ?? 0 };
  return result;
}

export function statsSummary(nodeName: string, startTime: Date, pods: readonly Pod[], usage: UsageSnapshot = { containers: [] }): StatsSummary {
  const byContainer = new Map(usage.containers.map((samples) => [`${samples.pod.uid}/${samples.container}`, samples]));
  return {
    node: { nodeName, startTime: wholeSeconds(startTime), ...usageOf(usage.node) },
    pods: pods
      .filter((pod) => pod.status?.startTime)
      .map((pod) => {
        const uid = pod.metadata.uid ?? '';
        const containers = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].flatMap((status): ContainerStats[] => {
          const startedAt = status.state?.running?.startedAt;
          return startedAt ? [{ name: status.name, startTime: startedAt, ...usageOf(byContainer.get(`${uid}/${status.name}`)) }] : [];
        });
        return {
          podRef: { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? '', uid },
          startTime: pod.status!.startTime!,
          containers,
          ...podUsage(containers),
        };
      }),
  };
}
