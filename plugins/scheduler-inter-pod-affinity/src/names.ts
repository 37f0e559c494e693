export const PLUGIN_NAME = '@skiff/plugin-scheduler-inter-pod-affinity';

/** The scheduler framework plugin this package registers (Kubernetes' name for it). */
export const INTER_POD_AFFINITY = 'InterPodAffinity';

/** Upstream's weight for the plugin's score in the default profile. */
export const DEFAULT_WEIGHT = 2;

/** Filter reasons, word for word as kube-scheduler reports them. */
export const REASON_AFFINITY = "node(s) didn't match pod affinity rules";
export const REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules";
export const REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules";
