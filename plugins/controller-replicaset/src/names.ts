export const PLUGIN_NAME = '@skiff/plugin-controller-replicaset';
/** The name `enabled` in the controller manager's options refers to. */
export const CONTROLLER_NAME = 'replicaset';

/** Event reasons, as kube-controller-manager records them. */
export const EVENT_REASON = Object.freeze({
  CREATED: 'SuccessfulCreate',
  CREATE_FAILED: 'FailedCreate',
  DELETED: 'SuccessfulDelete',
  DELETE_FAILED: 'FailedDelete',
});

/** The ReplicaSet condition set while pods cannot be created or deleted. */
export const REPLICA_FAILURE = 'ReplicaFailure';
