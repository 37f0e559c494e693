/**
 * The event reasons of a controller that creates and deletes pods (ReplicaSet, DaemonSet, StatefulSet, Job),
 * as kube-controller-manager records them; each controller adds its own beside these.
 */
export const POD_CONTROL_EVENT_REASON = Object.freeze({
  CREATED: 'SuccessfulCreate',
  CREATE_FAILED: 'FailedCreate',
  DELETED: 'SuccessfulDelete',
  DELETE_FAILED: 'FailedDelete',
});
