export const PLUGIN_NAME = '@skiff/plugin-controller-hpa';

/** The controller's name in the controller manager (kube-controller-manager's `--controllers` name). */
export const HPA_CONTROLLER_NAME = 'horizontalpodautoscaling';

/** The source its events carry, as upstream's. */
export const EVENT_COMPONENT = 'horizontal-pod-autoscaler';

/** The option defaults, kube-controller-manager's flag defaults. */
export const DEFAULTS = Object.freeze({
  syncPeriodSeconds: 15,
  tolerance: 0.1,
  downscaleStabilizationSeconds: 300,
  cpuInitializationPeriodSeconds: 300,
  initialReadinessDelaySeconds: 30,
});

/** Without `spec.behavior`, a scale-up goes at most to max(2 × current, 4) replicas in one step. */
export const LEGACY_SCALE_UP_FACTOR = 2;
export const LEGACY_SCALE_UP_MINIMUM = 4;

export const CONDITION = Object.freeze({
  ABLE_TO_SCALE: 'AbleToScale',
  SCALING_ACTIVE: 'ScalingActive',
  SCALING_LIMITED: 'ScalingLimited',
});

export const EVENT_REASON = Object.freeze({
  SUCCESSFUL_RESCALE: 'SuccessfulRescale',
  FAILED_RESCALE: 'FailedRescale',
  FAILED_GET_SCALE: 'FailedGetScale',
  FAILED_COMPUTE_METRICS_REPLICAS: 'FailedComputeMetricsReplicas',
  SELECTOR_REQUIRED: 'SelectorRequired',
  INVALID_SELECTOR: 'InvalidSelector',
});

/** What a failed metric's event and ScalingActive=False condition are called, by metric source type. */
export const FAILED_METRIC_REASON: Readonly<Record<string, string>> = Object.freeze({
  Resource: 'FailedGetResourceMetric',
  ContainerResource: 'FailedGetContainerResourceMetric',
  Pods: 'FailedGetPodsMetric',
  Object: 'FailedGetObjectMetric',
  External: 'FailedGetExternalMetric',
});
