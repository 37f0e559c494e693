import type { Pod } from '@skiff/api';
import type { SchedulerPlugin } from '@skiff/kernel';
import { podPriority } from '@skiff/scheduler';
import { PRIORITY_SORT } from './names.js';

/** A pod's creation time in milliseconds; a pod without one (not yet stored) sorts as the newest. */
function createdAt(pod: Pod): number {
  const time = Date.parse(pod.metadata.creationTimestamp ?? '');
  return Number.isNaN(time) ? Number.POSITIVE_INFINITY : time;
}

/**
 * Upstream's Less as a comparator: the higher `spec.priority` first; among equals, the earlier
 * `metadata.creationTimestamp` (upstream uses the time the pod entered the queue). Negative: `a` goes first.
 */
export function comparePods(a: Pod, b: Pod): number {
  const byPriority = podPriority(b) - podPriority(a);
  if (byPriority !== 0) return byPriority;
  const ta = createdAt(a);
  const tb = createdAt(b);
  return ta === tb ? 0 : ta < tb ? -1 : 1;
}

/** PrioritySort: orders the scheduling queue, so important pods are tried (and preempt) first. */
export function createPrioritySort(): SchedulerPlugin {
  return { name: PRIORITY_SORT, queueSort: comparePods };
}
