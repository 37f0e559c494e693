export const PLUGIN_NAME = '@skiff/plugin-controller-disruption';
/** The name `enabled` in the controller manager's options refers to. */
export const CONTROLLER_NAME = 'disruption';

/**
 * How long an entry of `status.disruptedPods` (a pod the eviction subresource let go) counts as not healthy
 * while the pod shows no deletion yet; after that the entry is dropped and the pod counts again.
 */
export const DELETION_TIMEOUT_MS = 2 * 60_000;
/** How long a pod not being deleted may keep a `DisruptionTarget: True` condition before it is set to False. */
export const STALE_POD_DISRUPTION_TIMEOUT_MS = 2 * 60_000;

/** The condition on a budget's status, and its reasons, as policy/v1 names them. */
export const DISRUPTION_ALLOWED = 'DisruptionAllowed';
export const CONDITION_REASON = Object.freeze({
  SUFFICIENT_PODS: 'SufficientPods',
  INSUFFICIENT_PODS: 'InsufficientPods',
  SYNC_FAILED: 'SyncFailed',
});
/**
 * The messages of the `DisruptionAllowed` condition when the sync worked. Upstream leaves them empty, but
 * the API server's schema check refuses an empty `message` on a metav1 Condition (upstream allows it).
 */
export const CONDITION_MESSAGE = Object.freeze({
  SUFFICIENT_PODS: 'enough healthy pods to allow a disruption',
  INSUFFICIENT_PODS: 'too few healthy pods to allow a disruption',
});

/** The pod condition an eviction (or a preemption, a taint) sets before the pod is deleted. */
export const DISRUPTION_TARGET = 'DisruptionTarget';
/** The reason of a `DisruptionTarget` condition the kubelet set; such conditions never go stale. */
export const TERMINATION_BY_KUBELET = 'TerminationByKubelet';

/** Event reasons, as kube-controller-manager records them. */
export const EVENT_REASON = Object.freeze({
  NO_PODS: 'NoPods',
  CALCULATE_EXPECTED_POD_COUNT_FAILED: 'CalculateExpectedPodCountFailed',
  UNMANAGED_PODS: 'UnmanagedPods',
  NOT_DELETED: 'NotDeleted',
});
