import { POD_CONTROL_EVENT_REASON } from '@skiff/controller-manager';

export const PLUGIN_NAME = '@skiff/plugin-controller-daemonset';
/** The name `enabled` in the controller manager's options refers to. */
export const CONTROLLER_NAME = 'daemonset';

/** On pods and ControllerRevisions: the revision (template hash) a pod was made from. */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';
/** On pods: the DaemonSet's template generation when the pod was made. */
export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';
/** Where apps/v1 DaemonSets carry the template generation of the older API, when the API server writes it. */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

/** The most pods one sync of a DaemonSet creates or deletes, as in kube-controller-manager. */
export const BURST_REPLICAS = 250;

/** Event reasons, as kube-controller-manager records them. */
export const EVENT_REASON = Object.freeze({
  ...{},
  ...POD_CONTROL_EVENT_REASON,
  FAILED_DAEMON_POD: 'FailedDaemonPod',
  SELECTING_ALL: 'SelectingAll',
});
