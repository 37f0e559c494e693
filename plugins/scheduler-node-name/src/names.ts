export const PLUGIN_NAME = '@skiff/plugin-scheduler-node-name';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same filter). */
export const NODE_NAME = 'NodeName';

/** kube-scheduler's reason, word for word. */
export const NODE_NAME_MISMATCH = "node(s) didn't match the requested node name";
