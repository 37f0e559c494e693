import type { Pod } from '@skiff/api';

/**
 * The kubelet's stats Summary (stats/v1alpha1, `/stats/summary`) with what this kubelet knows for certain: the
 * node's name and start, and each pod it started with its running containers. Usage figures (CPU, memory,
 * file systems, network) are left out rather than made up; clients treat absent figures as unknown.
 */
export interface StatsSummary {
  node: { nodeName: string; startTime: string };
  pods: PodStats[];
}

export interface PodStats {
  podRef: { name: string; namespace: string; uid: string };
  startTime?: string;
  containers: { name: string; startTime: string }[];
}

/** A time as Kubernetes writes it (RFC 3339, whole seconds). */
function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function statsSummary(nodeName: string, startTime: Date, pods: readonly Pod[]): StatsSummary {
  return {
    node: { nodeName, startTime: rfc3339(startTime) },
    pods: pods
      .filter((pod) => pod.status?.startTime)
      .map((pod) => ({
        podRef: { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? '', uid: pod.metadata.uid ?? '' },
        startTime: pod.status!.startTime!,
        containers: [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].flatMap((status) => {
          const startedAt = status.state?.running?.startedAt;
          return startedAt ? [{ name: status.name, startTime: startedAt }] : [];
        }),
      })),
  };
}
