import { POD_CONTROL_EVENT_REASON } from '@skiff/controller-manager';

export const PLUGIN_NAME = '@skiff/plugin-controller-replicaset';
/** The names `enabled` in the controller manager's options refers to. */
export const CONTROLLER_NAME = 'replicaset';
export const REPLICATION_CONTROLLER_NAME = 'replicationcontroller';

/** Event reasons, as kube-controller-manager records them. */
export const EVENT_REASON = POD_CONTROL_EVENT_REASON;

/** The condition set while pods cannot be created or deleted. */
export const REPLICA_FAILURE = 'ReplicaFailure';
