export const PLUGIN_NAME = '@skiff/plugin-scheduler-pod-topology-spread';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same filter and score). */
export const POD_TOPOLOGY_SPREAD = 'PodTopologySpread';

/** Upstream's default weight for this score. */
export const DEFAULT_WEIGHT = 2;

/** The filter's reasons, as `kubectl describe pod` shows them. */
export const REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints";
export const REASON_NODE_LABEL_NOT_MATCH = `${REASON_CONSTRAINTS_NOT_MATCH} (missing required label)`;

/** Well-known node labels the system default constraints spread over. */
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';
