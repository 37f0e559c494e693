import { isPodTerminal, type Pod } from '@skiff/api';

/**
 * A pod still doing its owner's work: not finished and not on its way out (Kubernetes' IsPodActive). What
 * a ReplicaSet counts towards its replicas and a Job towards its active pods.
 */
export function isPodActive(pod: Pod): boolean {
  return !isPodTerminal(pod) && !pod.metadata.deletionTimestamp;
}
