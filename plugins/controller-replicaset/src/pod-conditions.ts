import type { Pod, PodCondition } from '@skiff/api';

export function readyCondition(pod: Pod): PodCondition | undefined {
  return pod.status?.conditions?.find((condition) => condition.type === 'Ready');
}

export function isPodReady(pod: Pod): boolean {
  return readyCondition(pod)?.status === 'True';
}

/** Ready for at least `minReadySeconds`, judged by when the Ready condition last turned true. */
export function isPodAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const since = readyCondition(pod)?.lastTransitionTime;
  return since !== undefined && Date.parse(since) + minReadySeconds * 1000 < now;
}

/** Pods that count towards a ReplicaSet's replicas: not finished and not on their way out. */
export function isPodActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata.deletionTimestamp;
}
