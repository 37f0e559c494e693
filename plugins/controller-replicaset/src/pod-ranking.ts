import { isPodReady, podReadyCondition, type Pod } from '@skiff/api';

/** Lets users steer scale-down: pods with a lower cost are deleted first. */
export const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';

const PHASE_ORDER: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/**
 * Picks the `count` pods to delete when a ReplicaSet has too many, cheapest to lose first, in the order
 * kube-controller-manager uses:
 * unscheduled before scheduled; Pending before Unknown before Running; not ready before ready; lower
 * deletion cost first; pods sharing a node with more of their siblings first; ready for a shorter time
 * first; more container restarts first; newer before older.
 */
export function podsToDelete(pods: readonly Pod[], count: number): Pod[] {
  const podsPerNode = new Map<string, number>();
  for (const pod of pods) {
    const node = pod.spec.nodeName;
    if (node) podsPerNode.set(node, (podsPerNode.get(node) ?? 0) + 1);
  }
  const ranked = pods.map((pod) => ({ pod, siblingsOnNode: pod.spec.nodeName ? podsPerNode.get(pod.spec.nodeName)! : 0 }));
  ranked.sort((a, b) => compareForDeletion(a.pod, b.pod, a.siblingsOnNode, b.siblingsOnNode));
  return ranked.slice(0, count).map((entry) => entry.pod);
}

/** Negative when `a` should be deleted before `b`. */
export function compareForDeletion(a: Pod, b: Pod, siblingsOnNodeA = 0, siblingsOnNodeB = 0): number {
  const scheduledA = Boolean(a.spec.nodeName);
  const scheduledB = Boolean(b.spec.nodeName);
  if (scheduledA !== scheduledB) return scheduledA ? 1 : -1;

  const phaseDiff = (PHASE_ORDER[a.status?.phase ?? ''] ?? 0) - (PHASE_ORDER[b.status?.phase ?? ''] ?? 0);
  if (phaseDiff !== 0) return phaseDiff;

  const readyA = isPodReady(a);
  const readyB = isPodReady(b);
  if (readyA !== readyB) return readyA ? 1 : -1;

  const costDiff = deletionCost(a) - deletionCost(b);
  if (costDiff !== 0) return costDiff;

  if (siblingsOnNodeA !== siblingsOnNodeB) return siblingsOnNodeB - siblingsOnNodeA;

  if (readyA && readyB) {
    const readySince = newerFirst(podReadyCondition(a)?.lastTransitionTime, podReadyCondition(b)?.lastTransitionTime);
    if (readySince !== 0) return readySince;
  }

  const restartDiff = maxRestarts(b) - maxRestarts(a);
  if (restartDiff !== 0) return restartDiff;

  return newerFirst(a.metadata.creationTimestamp, b.metadata.creationTimestamp);
}

function deletionCost(pod: Pod): number {
  const value = Number(pod.metadata.annotations?.[POD_DELETION_COST_ANNOTATION]);
  return Number.isInteger(value) ? value : 0;
}

function maxRestarts(pod: Pod): number {
  return Math.max(0, ...(pod.status?.containerStatuses ?? []).map((status) => status.restartCount));
}

/** Orders later timestamps first; a missing one counts as the newest, as Kubernetes treats an empty time. */
function newerFirst(a: string | null | undefined, b: string | null | undefined): number {
  const timeA = a ? Date.parse(a) : Number.POSITIVE_INFINITY;
  const timeB = b ? Date.parse(b) : Number.POSITIVE_INFINITY;
  if (timeA === timeB) return 0;
  return timeA > timeB ? -1 : 1;
}
