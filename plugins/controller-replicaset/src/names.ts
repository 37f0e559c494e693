import { POD_CONTROL_EVENT_REASON } from '@skiff/controller-manager';

export const PLUGIN_NAME = '@skiff/plugin-controller-replicaset';
/** The name `enabled` in the controller manager's options refers to. */
export const CONTROLLER_NAME = 'replicaset';

/** Event reasons, as kube-controller-manager records them. */
export const EVENT_REASON = POD_CONTROL_EVENT_REASON;

/** The ReplicaSet condition set while pods cannot be created or deleted. */
export const REPLICA_FAILURE = 'ReplicaFailure';
