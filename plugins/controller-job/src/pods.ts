import { isPodReady, type Pod } from '@skiff/api';
import { completionIndexOf } from './indexes.js';
import { JOB_LABEL, JOB_TRACKING_FINALIZER } from './names.js';

export function isSucceeded(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded';
}

/** Failed, or being deleted before it succeeded (a deleted pod may never reach a phase of its own). */
export function isFailed(pod: Pod): boolean {
  return pod.status?.phase === 'Failed' || (Boolean(pod.metadata.deletionTimestamp) && !isSucceeded(pod));
}

/** Being deleted and not finished yet. */
export function isTerminating(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return Boolean(pod.metadata.deletionTimestamp) && phase !== 'Succeeded' && phase !== 'Failed';
}

export function hasTrackingFinalizer(pod: Pod): boolean {
  return pod.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER) ?? false;
}

export function podIndex(pod: Pod): number | undefined {
  return completionIndexOf(pod.metadata.annotations, pod.metadata.labels, JOB_LABEL.COMPLETION_INDEX);
}

/** When a finished pod ended: its containers' last finish, else when its deletion began, else `fallback`. */
export function finishTime(pod: Pod, fallback: number): number {
  const finishes = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])]
    .map((status) => status.state?.terminated?.finishedAt)
    .filter((time): time is string => Boolean(time))
    .map((time) => Date.parse(time));
  if (finishes.length > 0) return Math.max(...finishes);
  if (pod.metadata.deletionTimestamp) return Date.parse(pod.metadata.deletionTimestamp);
  return fallback;
}

/** Restarts of the containers of running or pending pods: what an OnFailure Job's backoff limit counts. */
export function restartsOf(pod: Pod): number {
  const phase = pod.status?.phase;
  if (phase !== 'Running' && phase !== 'Pending') return 0;
  return [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])].reduce((sum, status) => sum + status.restartCount, 0);
}

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/**
 * Orders active pods from cheapest to lose to dearest: unscheduled before scheduled, Pending before
 * Unknown before Running, not ready before ready, newer before older.
 */
export function compareForDeletion(a: Pod, b: Pod): number {
  const scheduled = Number(Boolean(a.spec.nodeName)) - Number(Boolean(b.spec.nodeName));
  if (scheduled !== 0) return scheduled;
  const phase = (PHASE_RANK[a.status?.phase ?? 'Pending'] ?? 0) - (PHASE_RANK[b.status?.phase ?? 'Pending'] ?? 0);
  if (phase !== 0) return phase;
  const ready = Number(isPodReady(a)) - Number(isPodReady(b));
  if (ready !== 0) return ready;
  return Date.parse(b.metadata.creationTimestamp ?? '') - Date.parse(a.metadata.creationTimestamp ?? '') || 0;
}
