export const PLUGIN_NAME = '@skiff/plugin-controller-endpoints';
/** The name `enabled` in the controller manager's options refers to. */
export const CONTROLLER_NAME = 'endpoints';
/** Addresses (ready and not ready together) one Endpoints object carries at most; the rest are left out. */
export const MAX_ENDPOINT_ADDRESSES = 1000;

export const ANNOTATION = Object.freeze({
  /** Set to `truncated` on an Endpoints object that lists fewer addresses than the Service has. */
  OVER_CAPACITY: 'endpoints.kubernetes.io/over-capacity',
  LAST_CHANGE_TRIGGER_TIME: 'endpoints.kubernetes.io/last-change-trigger-time',
  /** Endpoints used as a leader-election lock carry this; they have no Service and are not cleaned up. */
  LEADER: 'control-plane.alpha.kubernetes.io/leader',
});

export const OVER_CAPACITY_TRUNCATED = 'truncated';

/** Labels on the Endpoints this controller writes, under their well-known names. */
export const LABEL = Object.freeze({
  /** Present (empty) when the Service has no cluster IP. */
  HEADLESS: 'service.kubernetes.io/headless',
  /** Keeps the EndpointSlice mirroring controller from copying these Endpoints into slices. */
  SKIP_MIRROR: 'endpointslice.kubernetes.io/skip-mirror',
});

/** Event reasons, as kube-controller-manager records them. */
export const EVENT_REASON = Object.freeze({
  FAILED_TO_CREATE: 'FailedToCreateEndpoint',
  FAILED_TO_UPDATE: 'FailedToUpdateEndpoint',
});
