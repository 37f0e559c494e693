export const PLUGIN_NAME = '@skiff/plugin-scheduler-node-affinity';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same filter and score). */
export const NODE_AFFINITY = 'NodeAffinity';

/** Upstream's default weight of the NodeAffinity score. */
export const NODE_AFFINITY_WEIGHT = 2;

/** kube-scheduler's reasons, word for word. */
export const NODE_AFFINITY_REASON = Object.freeze({
  /** The node fails the pod's nodeSelector or required node affinity. */
  POD: "node(s) didn't match Pod's node affinity/selector",
  /** The node fails the profile's addedAffinity (NodeAffinityArgs). */
  ENFORCED: "node(s) didn't match scheduler-enforced node affinity",
  /** The required terms' `metadata.name` fields name no node in common. */
  CONFLICT: 'pod affinity terms conflict',
});
