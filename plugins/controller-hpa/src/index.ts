import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { HpaController } from './controller.js';
import { DEFAULTS, HPA_CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The HorizontalPodAutoscaler controller (autoscaling/v2 resource metrics, behavior, stabilization). */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'HorizontalPodAutoscalers synced in parallel',
  options: {
    syncPeriodSeconds: {
      type: 'number',
      minimum: 0.1,
      default: DEFAULTS.syncPeriodSeconds,
      description: 'how often each autoscaler is synced (kube-controller-manager --horizontal-pod-autoscaler-sync-period)',
    },
    tolerance: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      default: DEFAULTS.tolerance,
      description: 'how far the usage ratio may be from 1 before the controller scales (a behavior rule may set its own)',
    },
    downscaleStabilizationSeconds: {
      type: 'integer',
      minimum: 0,
      default: DEFAULTS.downscaleStabilizationSeconds,
      description: 'the scale-down stabilization window of autoscalers that do not set behavior.scaleDown.stabilizationWindowSeconds',
    },
    cpuInitializationPeriodSeconds: {
      type: 'integer',
      minimum: 0,
      default: DEFAULTS.cpuInitializationPeriodSeconds,
      description: "after a pod's start, how long its CPU samples count only once taken wholly after it became ready",
    },
    initialReadinessDelaySeconds: {
      type: 'integer',
      minimum: 0,
      default: DEFAULTS.initialReadinessDelaySeconds,
      description: "after a pod's start, how long a not-ready pod is taken as not yet started rather than unready",
    },
  },
  controllers(options) {
    return {
      [HPA_CONTROLLER_NAME]: (ctx) =>
        new HpaController(ctx, {
          syncPeriodMs: options.syncPeriodSeconds * 1000,
          tolerance: options.tolerance,
          downscaleStabilizationMs: options.downscaleStabilizationSeconds * 1000,
          cpuInitializationPeriodMs: options.cpuInitializationPeriodSeconds * 1000,
          initialReadinessDelayMs: options.initialReadinessDelaySeconds * 1000,
        }),
    };
  },
});
export default plugin;

export type HpaControllerPluginOptions = PluginOptions<typeof plugin>;

export { HPA_CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
export { ApiPodMetricsSource, POD_METRICS, type PodMetrics, type PodMetricsSource, type PodUsage } from './metrics-source.js';
