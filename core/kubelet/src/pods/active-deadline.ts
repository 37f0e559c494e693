import type { Pod } from '@skiff/api';

/** The pod status reason and message (and event) of a pod stopped at its activeDeadlineSeconds, as upstream's kubelet words them. */
export const DEADLINE_EXCEEDED = 'DeadlineExceeded';
export const DEADLINE_EXCEEDED_MESSAGE = 'Pod was active on the node longer than the specified deadline';

/** When the pod's activeDeadlineSeconds run out (ms since the epoch), counted from its status.startTime; undefined without either. */
export function activeDeadline(pod: Pod): number | undefined {
  const seconds = pod.spec.activeDeadlineSeconds;
  const start = pod.status?.startTime ? Date.parse(pod.status.startTime) : NaN;
  if (seconds === undefined || seconds === null || Number.isNaN(start)) return undefined;
  return start + seconds * 1000;
}
