export const PLUGIN_NAME = '@skiff/plugin-controller-endpointslice-mirroring';
/** The name `enabled` in the controller manager's options refers to. */
export const CONTROLLER_NAME = 'endpointslice-mirroring';
/** The `endpointslice.kubernetes.io/managed-by` value of the slices this controller owns, as upstream's. */
export const MANAGED_BY = 'endpointslicemirroring-controller.k8s.io';
/** Addresses mirrored per subset of an Endpoints object unless `maxEndpointsPerSubset` says otherwise (kube-controller-manager's default). */
export const DEFAULT_MAX_ENDPOINTS_PER_SUBSET = 1000;
/** The API server refuses slices with more endpoints than this. */
export const MAX_ENDPOINTS_PER_SLICE_LIMIT = 1000;

/** Well-known labels, as Kubernetes spells them. */
export const LABEL = Object.freeze({
  SERVICE_NAME: 'kubernetes.io/service-name',
  MANAGED_BY: 'endpointslice.kubernetes.io/managed-by',
  /** `"true"` on Endpoints someone else already covers with slices (the Endpoints controller sets it). */
  SKIP_MIRROR: 'endpointslice.kubernetes.io/skip-mirror',
});

export const ANNOTATION = Object.freeze({
  LAST_CHANGE_TRIGGER_TIME: 'endpoints.kubernetes.io/last-change-trigger-time',
  LAST_APPLIED: 'kubectl.kubernetes.io/last-applied-configuration',
  /** Endpoints used as a leader-election lock carry this; they are not mirrored. */
  LEADER: 'control-plane.alpha.kubernetes.io/leader',
});

/** Event reasons, as kube-controller-manager records them. */
export const EVENT_REASON = Object.freeze({
  INVALID_IP_ADDRESS: 'InvalidIPAddress',
  TOO_MANY_ADDRESSES: 'TooManyAddressesToMirror',
});
