import { RESOURCES, isApiError, type Pod, type PodCondition } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';

/** Kubernetes' reasons for PodScheduled=False: the pod fits nowhere, or scheduling it failed with an error. */
export type NotScheduledReason = 'Unschedulable' | 'SchedulerError';

function withNotScheduled(pod: Pod, message: string, reason: NotScheduledReason, now: string, nominatedNodeName?: string): Pod | undefined {
  const conditions = pod.status?.conditions ?? [];
  const current = conditions.find((condition) => condition.type === 'PodScheduled');
  const nominationSame = nominatedNodeName === undefined || pod.status?.nominatedNodeName === nominatedNodeName;
  if (current?.status === 'False' && current.reason === reason && current.message === message && nominationSame) return undefined;
  const condition: PodCondition = {
    type: 'PodScheduled',
    status: 'False',
    lastProbeTime: null,
    lastTransitionTime: current?.status === 'False' && current.lastTransitionTime ? current.lastTransitionTime : now,
    reason,
    message,
  };
  const updated = structuredClone(pod);
  updated.status = {
    ...{},
    ...updated.status,
    phase: updated.status?.phase ?? 'Pending',
    conditions: [...conditions.filter((c) => c.type !== 'PodScheduled'), condition],
    ...(nominatedNodeName !== undefined ? { nominatedNodeName } : {}),
  };
  return updated;
}

/**
 * Sets the pod's PodScheduled condition to False with `reason` and `message` through the status
 * subresource, unless it already says exactly that. One retry on a write conflict, with a fresh read.
 */
export async function markNotScheduled(client: ApiClient, pod: Pod, message: string, reason: NotScheduledReason, nominatedNodeName?: string): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const first = withNotScheduled(pod, message, reason, now, nominatedNodeName);
  if (!first) return;
  try {
    await client.updateStatus(RESOURCES.pods, first);
  } catch (err) {
    if (!isApiError(err, 'Conflict')) throw err;
    const fresh = await client.get<Pod>(RESOURCES.pods, pod.metadata.name!, pod.metadata.namespace);
    if (fresh.spec.nodeName) return;
    const second = withNotScheduled(fresh, message, reason, now, nominatedNodeName);
    if (second) await client.updateStatus(RESOURCES.pods, second);
  }
}
