import type { SchedulingStatus } from '@skiff/kernel';

/** Kubernetes' message when the cluster has no nodes at all. */
export const NO_NODES_MESSAGE = 'no nodes available to schedule pods';

/**
 * The message `kubectl describe pod` shows for a pod that fits nowhere, built like Kubernetes' FitError:
 * every reason counted over the nodes that gave it, as "<count> <reason>", sorted, e.g.
 * "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu."
 */
export function fitErrorMessage(totalNodes: number, failures: ReadonlyMap<string, SchedulingStatus>, postFilterMessage?: string): string {
  const histogram = new Map<string, number>();
  for (const status of failures.values()) {
    for (const reason of status?.reasons ?? []) histogram.set(reason, (histogram.get(reason) ?? 0) + 1);
  }
  const reasons = [...histogram].map(([reason, count]) => `${count} ${reason}`).sort();
  const message = `0/${totalNodes} nodes are available: ${reasons.join(', ')}.`;
  return postFilterMessage ? `${message} ${postFilterMessage}` : message;
}
