import { POD_CONTROL_EVENT_REASON } from '@skiff/controller-manager';

export const PLUGIN_NAME = '@skiff/plugin-controller-statefulset';
/** The name `enabled` in the controller manager's options refers to. */
export const CONTROLLER_NAME = 'statefulset';

/** Labels the controller puts on what it makes, under upstream's names. */
export const LABEL = Object.freeze({
  /** On pods: the name of the ControllerRevision the pod was made from. */
  REVISION: 'controller-revision-hash',
  /** On pods: the pod's own name, so a Service can select exactly one member. */
  POD_NAME: 'statefulset.kubernetes.io/pod-name',
  /** On pods: the pod's ordinal. */
  POD_INDEX: 'apps.kubernetes.io/pod-index',
  /** On ControllerRevisions: the hash their name ends with. */
  REVISION_HASH: 'controller.kubernetes.io/hash',
});

/** Event reasons, as kube-controller-manager records them. */
export const EVENT_REASON = Object.freeze({
  ...{},
  ...POD_CONTROL_EVENT_REASON,
  UPDATED: 'SuccessfulUpdate',
  UPDATE_FAILED: 'FailedUpdate',
  CONFLICTING_CONTROLLER: 'ConflictingController',
});

/** The most pods a Parallel StatefulSet creates or deletes at once, as in kube-controller-manager. */
export const MAX_BATCH_SIZE = 500;
