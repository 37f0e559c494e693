import type { ContainerStatsInfo, NodeStatsInfo } from '@skiff/kernel';
import type { SamplePair, UsageSnapshot } from './usage.js';

/** The Prometheus text format's content type, as the kubelet's /metrics endpoints answer. */
export const PROMETHEUS_TEXT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function labelsOf(labels: Record<string, string>): string {
  const pairs = Object.entries(labels).map(([key, value]) => `${key}="${escapeLabel(value)}"`);
  return pairs.length ? `{${pairs.join(',')}}` : '';
}

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: string[];
}

function sample(labels: Record<string, string>, value: number, timestampMs: number): string {
  return `${labelsOf(labels)} ${value} ${Math.floor(timestampMs)}`;
}

type Reading = ContainerStatsInfo | NodeStatsInfo;

function add(cpu: Family, memory: Family, labels: Record<string, string>, reading: Reading): void {
  if (reading.cpuCoreNanoSeconds !== undefined) cpu.samples.push(sample(labels, reading.cpuCoreNanoSeconds / 1e9, reading.timestampMs));
  if (reading.memoryWorkingSetBytes !== undefined) memory.samples.push(sample(labels, reading.memoryWorkingSetBytes, reading.timestampMs));
}

/**
 * The kubelet's `/metrics/resource` in the Prometheus text format, with upstream's metric names: cumulative CPU seconds
 * and the working set of the node, each pod and each container, each sample with the time it was read.
 */
export function resourceMetricsText(snapshot: UsageSnapshot): string {
  const family = (name: string, help: string, type: Family['type']): Family => ({ name, help, type, samples: [] });
  const nodeCpu = family('node_cpu_usage_seconds_total', 'CPU time the node has used, in core-seconds', 'counter');
  const nodeMemory = family('node_memory_working_set_bytes', "The node's memory working set, in bytes", 'gauge');
  const podCpu = family('pod_cpu_usage_seconds_total', "CPU time the pod's containers have used, in core-seconds", 'counter');
  const podMemory = family('pod_memory_working_set_bytes', "The pod's memory working set, in bytes", 'gauge');
  const containerCpu = family('container_cpu_usage_seconds_total', 'CPU time the container has used, in core-seconds', 'counter');
  const containerMemory = family('container_memory_working_set_bytes', "The container's memory working set, in bytes", 'gauge');
  if (snapshot.node) add(nodeCpu, nodeMemory, {}, snapshot.node.newer);
  const pods = new Map<string, { labels: Record<string, string>; readings: SamplePair<ContainerStatsInfo>[] }>();
  for (const samples of snapshot.containers) {
    const { namespace, name, uid } = samples.pod;
    add(containerCpu, containerMemory, { container: samples.container, namespace, pod: name }, samples.newer);
    const pod = pods.get(uid) ?? { labels: { namespace, pod: name }, readings: [] };
    pod.readings.push(samples);
    pods.set(uid, pod);
  }
  for (const { labels, readings } of pods.values()) {
    const newest = Math.max(...readings.map((pair) => pair.newer.timestampMs));
    const total = (pick: (reading: ContainerStatsInfo) => number | undefined) => {
      const values = readings.map((pair) => pick(pair.newer));
      return values.every((value) => value !== undefined) ? values.reduce((a, b) => a! + b!, 0) : undefined;
    };
    const cpu = total((reading) => reading.cpuCoreNanoSeconds);
    const memory = total((reading) => reading.memoryWorkingSetBytes);
    if (cpu !== undefined) podCpu.samples.push(sample(labels, cpu / 1e9, newest));
    if (memory !== undefined) podMemory.samples.push(sample(labels, memory, newest));
  }
  const scrapeError = family('scrape_error', '1 when the last reading of container figures failed, 0 otherwise', 'gauge');
  scrapeError.samples.push(` ${snapshot.failed ? 1 : 0}`);
  const families = [containerCpu, containerMemory, nodeCpu, nodeMemory, podCpu, podMemory, scrapeError];
  return families
    .filter((f) => f.samples.length)
    .map((f) => [`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`, ...f.samples.map((line) => `${f.name}${line}`)].join('\n'))
    .join('\n')
    .concat('\n');
}
