export const PLUGIN_NAME = '@skiff/plugin-scheduler-node-ports';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same filter). */
export const NODE_PORTS = 'NodePorts';

/** kube-scheduler's reason, word for word. */
export const NODE_PORTS_REASON = "node(s) didn't have free ports for the requested pod ports";

/** A host port without hostIP binds every address. */
export const BIND_ALL_HOST_IP = '0.0.0.0';
