export const PLUGIN_NAME = '@skiff/plugin-controller-endpointslice';
/** The name `enabled` in the controller manager's options refers to. */
export const CONTROLLER_NAME = 'endpointslice';
/** The `endpointslice.kubernetes.io/managed-by` value of the slices this controller owns, as upstream's. */
export const MANAGED_BY = 'endpointslice-controller.k8s.io';
/** Endpoints per slice unless the `maxEndpointsPerSlice` option says otherwise (kube-controller-manager's default). */
export const DEFAULT_MAX_ENDPOINTS_PER_SLICE = 100;
/** The API server refuses slices with more endpoints than this. */
export const MAX_ENDPOINTS_PER_SLICE_LIMIT = 1000;

/** Well-known labels and annotations, as Kubernetes spells them. */
export const LABEL = Object.freeze({
  SERVICE_NAME: 'kubernetes.io/service-name',
  MANAGED_BY: 'endpointslice.kubernetes.io/managed-by',
  HEADLESS: 'service.kubernetes.io/headless',
  SKIP_MIRROR: 'endpointslice.kubernetes.io/skip-mirror',
  ZONE: 'topology.kubernetes.io/zone',
});

export const ANNOTATION = Object.freeze({
  LAST_CHANGE_TRIGGER_TIME: 'endpoints.kubernetes.io/last-change-trigger-time',
});

/** Event reasons, as kube-controller-manager records them. */
export const EVENT_REASON = Object.freeze({
  FAILED_TO_UPDATE: 'FailedToUpdateEndpointSlices',
});
