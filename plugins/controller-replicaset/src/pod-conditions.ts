import type { Pod } from '@skiff/api';

/** Pods that count towards a ReplicaSet's replicas: not finished and not on their way out. */
export function isPodActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata.deletionTimestamp;
}
