import { trackWork } from '@skiff/controller-manager';
import { definePlugin, type PluginOptions } from '@skiff/kernel';
import { DeploymentController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The Deployment controller: rolls Deployments out as ReplicaSets. */
const plugin = definePlugin({
  name: PLUGIN_NAME,
  version: '0.1.0',
  kernel: '^0.1.0',
  options: {
    type: 'object',
    properties: {
      workers: { type: 'integer', minimum: 1, description: "Deployments synced in parallel (default: the controller manager's workers)" },
    },
  },
  apply(kernel, options) {
    kernel.hooks.controllers.tap(PLUGIN_NAME, (registry) => {
      registry.register({
        name: CONTROLLER_NAME,
        start(ctx) {
          trackWork(ctx, new DeploymentController(ctx).run(options.workers ?? ctx.workers ?? 2));
        },
      });
    });
  },
});
export default plugin;

export type DeploymentControllerOptions = PluginOptions<typeof plugin>;

export { DeploymentController } from './controller.js';
export { CONTROLLER_NAME, PLUGIN_NAME, POD_TEMPLATE_HASH_LABEL, ANNOTATION, CONDITION, REASON, EVENT_REASON } from './names.js';
export { templateHash as podTemplateHash } from '@skiff/controller-manager';
export {
  resolveFenceposts,
  scaledValue,
  maxSurge,
  maxUnavailable,
  newReplicaSetReplicas,
  planNewReplicaSetScale,
  planOldReplicaSetsScaleDown,
  type ScaleStep,
} from './rolling.js';
export { proportionalScale } from './proportional.js';
export { calculateStatus, rolloutStatus, deploymentComplete } from './status.js';
export { DeploymentError, DEPLOYMENT_ERRORS, type DeploymentErrorCode } from './errors.js';
