import type { Pod, ReplicaSet } from '@skiff/api';

/**
 * Whether pods of the old ReplicaSets may still be running, which a Recreate rollout must wait out
 * before starting new ones. Pods that finished (Succeeded, Failed) do not count; Unknown ones do, since
 * they may be running on a node we cannot hear from.
 */
export function oldPodsRunning(oldRSs: readonly ReplicaSet[], podsOf: (rs: ReplicaSet) => readonly Pod[]): boolean {
  if (oldRSs.some((rs) => (rs.status?.replicas ?? 0) > 0)) return true;
  return oldRSs.some((rs) => podsOf(rs).some((pod) => pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed'));
}
