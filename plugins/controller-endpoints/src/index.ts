import { trackWork } from '@skiff/controller-manager';
import { definePlugin, type PluginOptions } from '@skiff/kernel';
import { EndpointsController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The Endpoints controller: the core/v1 Endpoints of each Service with a selector, from its pods. */
const plugin = definePlugin({
  name: PLUGIN_NAME,
  version: '0.1.0',
  kernel: '^0.1.0',
  options: {
    type: 'object',
    properties: {
      workers: { type: 'integer', minimum: 1, description: "Services synced in parallel (default: the controller manager's workers)" },
    },
  },
  apply(kernel, options) {
    kernel.hooks.controllers.tap(PLUGIN_NAME, (registry) => {
      registry.register({
        name: CONTROLLER_NAME,
        start(ctx) {
          trackWork(ctx, new EndpointsController(ctx).run(options.workers ?? ctx.workers ?? 2));
        },
      });
    });
  },
});
export default plugin;

export type EndpointsControllerOptions = PluginOptions<typeof plugin>;

export { EndpointsController } from './controller.js';
export { ANNOTATION, CONTROLLER_NAME, EVENT_REASON, MAX_ENDPOINT_ADDRESSES, OVER_CAPACITY_TRUNCATED, PLUGIN_NAME } from './names.js';
export { buildSubsets, endpointsLabels, planEndpoints, podAddress, sameSubsets, truncateSubsets, type EndpointsPlanInput } from './subsets.js';
export type { EndpointAddress, EndpointPort, Endpoints, EndpointSubset } from './resources.js';
