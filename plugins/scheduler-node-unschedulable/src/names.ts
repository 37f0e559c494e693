export const PLUGIN_NAME = '@skiff/plugin-scheduler-node-unschedulable';

/** The scheduler framework plugin this package registers (Kubernetes' name for the same filter). */
export const NODE_UNSCHEDULABLE = 'NodeUnschedulable';

/** kube-scheduler's reason, word for word. */
export const NODE_UNSCHEDULABLE_REASON = 'node(s) were unschedulable';

/** The taint Kubernetes puts on cordoned nodes; a pod tolerating it (with effect NoSchedule) may still go there. */
export const UNSCHEDULABLE_TAINT = Object.freeze({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' });
