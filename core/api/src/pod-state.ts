// What a pod's status says about it, as Kubernetes' pod helpers (k8s.io/kubernetes/pkg/api/v1/pod) read
// it: the scheduler, the kubelet and the workload controllers all judge pods by these.
import type { Pod, PodCondition } from './types.js';

/** Succeeded or Failed: the pod's containers will not run again. */
export function isPodTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** The pod's Ready condition (the first one, as Kubernetes' GetPodCondition finds it). */
export function podReadyCondition(pod: Pod): PodCondition | undefined {
  return pod.status?.conditions?.find((condition) => condition.type === 'Ready');
}

/** The pod's Ready condition is True. */
export function isPodReady(pod: Pod): boolean {
  return podReadyCondition(pod)?.status === 'True';
}

/**
 * Ready for at least `minReadySeconds` at `now` (ms since the epoch), judged by when the Ready condition
 * last turned true; a ready pod without that time is available only when `minReadySeconds` is 0.
 */
export function isPodAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const since = podReadyCondition(pod)?.lastTransitionTime;
  return typeof since === 'string' && Date.parse(since) + minReadySeconds * 1000 < now;
}
