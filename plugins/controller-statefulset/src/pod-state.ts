import type { Pod } from '@skiff/api';

/** A pod the API server holds: every stored pod has a phase; one the controller is about to create has none. */
export function isCreated(pod: Pod): boolean {
  return Boolean(pod.status?.phase);
}

export function isPending(pod: Pod): boolean {
  return pod.status?.phase === 'Pending';
}

/** Failed or Succeeded: its containers will not run again, so the set replaces it. */
export function isFinished(pod: Pod): boolean {
  return pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';
}

export function isTerminating(pod: Pod): boolean {
  return Boolean(pod.metadata.deletionTimestamp);
}

export function readySince(pod: Pod): string | undefined {
  const ready = pod.status?.conditions?.find((condition) => condition.type === 'Ready');
  return ready?.status === 'True' ? (ready.lastTransitionTime ?? '') : undefined;
}

export function isRunningAndReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && readySince(pod) !== undefined;
}

/** Running and ready for at least `minReadySeconds` (judged by when the Ready condition last turned true). */
export function isRunningAndAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (!isRunningAndReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const since = Date.parse(readySince(pod) ?? '');
  return !Number.isNaN(since) && since + minReadySeconds * 1000 < now;
}

/** Not counted on to serve: terminating, not running and ready, or not ready long enough. */
export function isUnavailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  return isTerminating(pod) || !isRunningAndAvailable(pod, minReadySeconds, now);
}
