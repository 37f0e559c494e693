import type { Pod } from '@skiff/api';
import type { SchedulerPlugin } from '@skiff/kernel';
import { podPriority } from '@skiff/scheduler';
import { PRIORITY_SORT } from './names.js';

/** The API server writes creation times as `YYYY-MM-DDTHH:MM:SSZ`: two of those compare as text. */
const CANONICAL = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

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
  // The queue compares on every push and pop: skip parsing dates when both are in the API server's form.
  const sa = a.metadata.creationTimestamp;
  const sb = b.metadata.creationTimestamp;
  if (typeof sa === 'string' && typeof sb === 'string' && sa.length === 20 && sb.length === 20 && CANONICAL.test(sa) && CANONICAL.test(sb))
    return sa === sb ? 0 : sa < sb ? -1 : 1;
  const ta = createdAt(a);
  const tb = createdAt(b);
  return ta === tb ? 0 : ta < tb ? -1 : 1;
}

/** PrioritySort: orders the scheduling queue, so important pods are tried (and preempt) first. */
export function createPrioritySort(): SchedulerPlugin {
  return { name: PRIORITY_SORT, queueSort: comparePods };
}
