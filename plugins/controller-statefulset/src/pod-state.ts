import { isPodAvailable, isPodReady, type Pod } from '@skiff/api';

/** A pod the API server holds: every stored pod has a phase; one the controller is about to create has none. */
export function isCreated(pod: Pod): boolean {
  return Boolean(pod.status?.phase);
}

export function isPending(pod: Pod): boolean {
  return pod.status?.phase === 'Pending';
}

export function isTerminating(pod: Pod): boolean {
  return Boolean(pod.metadata.deletionTimestamp);
}

export function isRunningAndReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && isPodReady(pod);
}

/** Running and ready for at least `minReadySeconds` (judged by when the Ready condition last turned true). */
export function isRunningAndAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  return pod.status?.phase === 'Running' && isPodAvailable(pod, minReadySeconds, now);
}

/** Not counted on to serve: terminating, not running and ready, or not ready long enough. */
export function isUnavailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  return isTerminating(pod) || !isRunningAndAvailable(pod, minReadySeconds, now);
}
