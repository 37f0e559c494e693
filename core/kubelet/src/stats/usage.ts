import type { ContainerStatsInfo, NodeResourceUsage, NodeStatsInfo, PodRef, PodResourceUsage, UsageFigures } from '@skiff/kernel';

/** CPU in use between two cumulative readings: nanocores, and the window they span. */
export interface CpuRate {
  nanoCores: number;
  windowSeconds: number;
}

/** What a rate is computed from: a moment and the CPU time used up to it. */
export interface CumulativeCpu {
  timestampMs: number;
  cpuCoreNanoSeconds?: number;
}

/**
 * Nanocores between two readings: the CPU time used between them (ns) per second of wall time, i.e. billionths of a
 * core. Undefined when either reading lacks CPU time, when time did not advance, or when the counter went back (the
 * readings are then of two different processes).
 */
export function cpuRate(older: CumulativeCpu, newer: CumulativeCpu): CpuRate | undefined {
  const { cpuCoreNanoSeconds: before } = older;
  const { cpuCoreNanoSeconds: after } = newer;
  if (before === undefined || after === undefined || after < before) return undefined;
  const windowSeconds = (newer.timestampMs - older.timestampMs) / 1000;
  if (!(windowSeconds > 0)) return undefined;
  return { nanoCores: Math.round((after - before) / windowSeconds), windowSeconds };
}

/**
 * The working set from cgroup figures, as the kubelet and cAdvisor define it: memory in use less the inactive file
 * cache (which the kernel can take back at once), never below zero.
 */
export function workingSetBytes(usageBytes: number, inactiveFileBytes: number): number {
  return Math.max(0, usageBytes - inactiveFileBytes);
}

/** A time as the stats Summary and the metrics API write it (RFC 3339, UTC). */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms)).toISOString();
}

/** Two readings of one thing: the newest, and the one before it (absent after the first reading). */
export interface SamplePair<T> {
  older?: T;
  newer: T;
}

/** A container's readings, with the pod and container they belong to. */
export interface ContainerSamples extends SamplePair<ContainerStatsInfo> {
  pod: PodRef;
  container: string;
}

/** What the sampler holds: the node's readings and each running container's. */
export interface UsageSnapshot {
  node?: SamplePair<NodeStatsInfo>;
  containers: ContainerSamples[];
  /** The last reading failed (the figures held are older). */
  failed?: boolean;
}

/** Usage over the pair's window; undefined until there are two readings with CPU time and a memory figure. */
export function figuresOf(pair: SamplePair<CumulativeCpu & { memoryWorkingSetBytes?: number }>): UsageFigures | undefined {
  if (!pair.older || pair.newer.memoryWorkingSetBytes === undefined) return undefined;
  const rate = cpuRate(pair.older, pair.newer);
  if (!rate) return undefined;
  return {
    timestamp: rfc3339(pair.newer.timestampMs),
    windowSeconds: rate.windowSeconds,
    cpuNanoCores: rate.nanoCores,
    memoryWorkingSetBytes: pair.newer.memoryWorkingSetBytes,
  };
}

/** The node's usage and its pods', leaving out containers (and pods) with fewer than two readings. */
export function resourceUsageOf(nodeName: string, snapshot: UsageSnapshot): NodeResourceUsage {
  const pods = new Map<string, PodResourceUsage>();
  for (const samples of snapshot.containers) {
    const figures = figuresOf(samples);
    if (!figures) continue;
    const { namespace, name, uid } = samples.pod;
    const key = `${namespace}/${name}/${uid}`;
    const pod = pods.get(key) ?? { namespace, name, uid, containers: [] };
    pod.containers.push({ name: samples.container, ...figures });
    pods.set(key, pod);
  }
  const node = snapshot.node && figuresOf(snapshot.node);
  return { nodeName, ...(node ? { node } : {}), pods: [...pods.values()] };
}
