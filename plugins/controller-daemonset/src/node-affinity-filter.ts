import type { SchedulerPlugin } from '@skiff/kernel';
import { NODE_AFFINITY_FILTER } from './names.js';
import { podFitsNodeAffinity } from './node-affinity.js';

/** kube-scheduler's reason when a node fails a pod's node selector or required node affinity. */
export const NODE_AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector";

/**
 * The scheduler's NodeAffinity filter: a node must match the pod's `nodeSelector` and its required node
 * affinity (label expressions and `metadata.name` fields). DaemonSet pods reach their node through it.
 */
export const nodeAffinityFilter: SchedulerPlugin = {
  name: NODE_AFFINITY_FILTER,
  filter(_state, pod, info) {
    if (podFitsNodeAffinity(pod.spec, info.node)) return null;
    return { code: 'UnschedulableAndUnresolvable', reasons: [NODE_AFFINITY_MISMATCH] };
  },
};
