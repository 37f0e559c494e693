import { trackWork } from '@skiff/controller-manager';
import { definePlugin, type PluginOptions } from '@skiff/kernel';
import { ServiceLBController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** LoadBalancer Services get the nodes' InternalIP addresses as their ingress, as small local clusters do. */
const plugin = definePlugin({
  name: PLUGIN_NAME,
  version: '0.1.0',
  kernel: '^0.1.0',
  options: {
    type: 'object',
    properties: {
      workers: { type: 'integer', minimum: 1, description: "Services worked on at once (default: the controller manager's workers)" },
    },
  },
  apply(kernel, options) {
    kernel.hooks.controllers.tap(PLUGIN_NAME, (registry) => {
      registry.register({
        name: CONTROLLER_NAME,
        start(ctx) {
          trackWork(ctx, new ServiceLBController(ctx).run(options.workers ?? ctx.workers ?? 2));
        },
      });
    });
  },
});
export default plugin;

export type ServiceLBOptions = PluginOptions<typeof plugin>;

export { ServiceLBController } from './controller.js';
export { isOurs, nodeIngress, type LoadBalancerIngress } from './ingress.js';
export { CONTROLLER_NAME, PLUGIN_NAME, EXCLUDE_LABEL } from './names.js';
