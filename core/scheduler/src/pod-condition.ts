import { RESOURCES, isApiError, type Pod, type PodCondition } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';

function withUnschedulable(pod: Pod, message: string, now: string): Pod | undefined {
  const conditions = pod.status?.conditions ?? [];
  const current = conditions.find((condition) => condition.type === 'PodScheduled');
  if (current?.status === 'False' && current.reason === 'Unschedulable' && current.message === message) return undefined;
  const condition: PodCondition = {
    type: 'PodScheduled',
    status: 'False',
    lastProbeTime: null,
    lastTransitionTime: current?.status === 'False' && current.lastTransitionTime ? current.lastTransitionTime : now,
    reason: 'Unschedulable',
    message,
  };
  const updated = structuredClone(pod);
  updated.status = {
    ...updated.status,
    phase: updated.status?.phase ?? 'Pending',
    conditions: [...conditions.filter((c) => c.type !== 'PodScheduled'), condition],
  };
  return updated;
}

/**
 * Sets the pod's PodScheduled condition to False / Unschedulable with `message` through the status
 * subresource, unless it already says exactly that. One retry on a write conflict, with a fresh read.
 */
export async function markUnschedulable(client: ApiClient, pod: Pod, message: string): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const first = withUnschedulable(pod, message, now);
  if (!first) return;
  try {
    await client.updateStatus(RESOURCES.pods, first);
  } catch (err) {
    if (!isApiError(err, 'Conflict')) throw err;
    const fresh = await client.get<Pod>(RESOURCES.pods, pod.metadata.name!, pod.metadata.namespace);
    if (fresh.spec.nodeName) return;
    const second = withUnschedulable(fresh, message, now);
    if (second) await client.updateStatus(RESOURCES.pods, second);
  }
}
