import { createLoopbackClient } from '@skiff/client';
import type {} from '@skiff/apiserver';
import { definePlugin, LIFECYCLE_STAGE, packageInfo, type ApiClient, type PluginOptions } from '@skiff/kernel';
import { MetricsApi } from './metrics-api.js';
import { NodeUsageCache } from './node-usage.js';
import { GROUP_PRIORITY_MINIMUM, METRICS_GROUP, METRICS_SERVER_USER, METRICS_VERSION, PLUGIN_NAME, VERSION_PRIORITY } from './names.js';
import { metricsServerOptionsSchema } from './options.js';
import { RESOURCES } from './objects.js';

/** Starts once the API server serves: the group is delegated then, as the aggregator delegates APIServices. */
const METRICS_SERVER_STAGE = LIFECYCLE_STAGE.API_SERVER + 10;

/**
 * metrics.k8s.io (upstream's metrics-server's place): NodeMetrics and PodMetrics from the kubelets' resource usage,
 * served through the API server's aggregation seam (discovery, authentication, flow control, authorization and audit
 * as for any request), for `kubectl top` and autoscalers.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['apiHandler', 'apiExtensions'],
  options: metricsServerOptionsSchema,
  apply(kernel, options) {
    let remove: (() => void) | undefined;
    kernel.lifecycle(PLUGIN_NAME, METRICS_SERVER_STAGE, {
      start() {
        const extensions = kernel.resolve('apiExtensions');
        const logger = kernel.logger.child({ component: 'metrics-server' });
        let client: ApiClient | undefined;
        const usage = new NodeUsageCache({
          connect: (node) => extensions.nodeConnection(node),
          resolutionMs: options.metricResolutionSeconds * 1000,
          timeoutMs: options.kubeletTimeoutSeconds * 1000,
          logger,
        });
        const api = new MetricsApi({
          client: () =>
            (client ??= createLoopbackClient(kernel.resolve('apiHandler'), { ...{}, ...METRICS_SERVER_USER, groups: [...METRICS_SERVER_USER.groups] })),
          usage,
          fallbackWindowSeconds: options.metricResolutionSeconds,
        });
        remove = extensions.delegate({
          group: METRICS_GROUP,
          version: METRICS_VERSION,
          groupPriorityMinimum: GROUP_PRIORITY_MINIMUM,
          versionPriority: VERSION_PRIORITY,
          serve: (request, user) => api.serve(request, user),
          resources: () => RESOURCES,
        });
      },
      stop() {
        remove?.();
        remove = undefined;
      },
    });
  },
});
export default plugin;

export type MetricsServerPluginOptions = PluginOptions<typeof plugin>;

export { PLUGIN_NAME, METRICS_GROUP, METRICS_VERSION } from './names.js';
export { goDuration, usageQuantities, type NodeMetrics, type PodMetrics, type ResourceUsage } from './objects.js';
