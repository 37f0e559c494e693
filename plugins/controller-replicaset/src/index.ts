import { trackWork } from '@skiff/controller-manager';
import { definePlugin, type PluginOptions } from '@skiff/kernel';
import { ReplicaSetController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The ReplicaSet controller: keeps each ReplicaSet's pods at `spec.replicas`. */
const plugin = definePlugin({
  name: PLUGIN_NAME,
  version: '0.1.0',
  kernel: '^0.1.0',
  options: {
    type: 'object',
    properties: {
      workers: { type: 'integer', minimum: 1, description: "ReplicaSets synced in parallel (default: the controller manager's workers)" },
    },
  },
  apply(kernel, options) {
    kernel.hooks.controllers.tap(PLUGIN_NAME, (registry) => {
      registry.register({
        name: CONTROLLER_NAME,
        start(ctx) {
          trackWork(ctx, new ReplicaSetController(ctx).run(options.workers ?? ctx.workers ?? 2));
        },
      });
    });
  },
});
export default plugin;

export type ReplicaSetControllerOptions = PluginOptions<typeof plugin>;

export { ReplicaSetController, BURST_REPLICAS } from './controller.js';
export { CONTROLLER_NAME, PLUGIN_NAME, EVENT_REASON } from './names.js';
export { podsToDelete, compareForDeletion, POD_DELETION_COST_ANNOTATION } from './pod-ranking.js';
export { calculateStatus } from './status.js';
export { Expectations, slowStartBatch } from '@skiff/controller-manager';
