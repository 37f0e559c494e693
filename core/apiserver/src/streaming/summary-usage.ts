import { isJsonObject } from '@skiff/api';
import type { NodeResourceUsage, PodResourceUsage, UsageFigures } from '@skiff/kernel';

/** The part of a stats/v1alpha1 Summary that usage comes from (CPUStats and MemoryStats of node, pods and containers). */
interface Measured {
  cpu?: { time?: string; usageNanoCores?: number };
  memory?: { time?: string; workingSetBytes?: number };
}

/**
 * Usage figures from a Summary entry; undefined when it lacks the CPU rate or the working set (a container the
 * kubelet has read once only). A Summary does not say over which window the rate was taken.
 */
function figuresOf(entry: Measured | undefined): UsageFigures | undefined {
  const nanoCores = entry?.cpu?.usageNanoCores;
  const workingSet = entry?.memory?.workingSetBytes;
  if (typeof nanoCores !== 'number' || typeof workingSet !== 'number') return undefined;
  const timestamp = entry?.cpu?.time ?? entry?.memory?.time;
  if (typeof timestamp !== 'string') return undefined;
  return { timestamp, cpuNanoCores: nanoCores, memoryWorkingSetBytes: workingSet };
}

/** A kubelet's stats Summary (`/stats/summary`) as the node's resource usage; pods without figures are left out. */
export function usageOfSummary(summary: unknown): NodeResourceUsage {
  if (!isJsonObject(summary) || !isJsonObject(summary.node)) throw new Error('the kubelet answered a stats summary without its node');
  const node = summary.node as Measured & { nodeName?: string };
  const pods: PodResourceUsage[] = [];
  for (const pod of Array.isArray(summary.pods) ? (summary.pods as unknown[]) : []) {
    if (!isJsonObject(pod) || !isJsonObject(pod.podRef)) continue;
    const ref = pod.podRef as { name?: string; namespace?: string; uid?: string };
    const containers = (Array.isArray(pod.containers) ? (pod.containers as (Measured & { name?: string })[]) : []).flatMap((container) => {
      const figures = figuresOf(container);
      return figures && container.name ? [{ name: container.name, ...figures }] : [];
    });
    if (containers.length) pods.push({ namespace: ref.namespace ?? '', name: ref.name ?? '', uid: ref.uid ?? '', containers });
  }
  const nodeFigures = figuresOf(node);
  return { nodeName: node.nodeName ?? '', ...(nodeFigures ? { node: nodeFigures } : {}), pods };
}
