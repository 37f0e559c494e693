import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { DeploymentController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The Deployment controller: rolls Deployments out as ReplicaSets. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'Deployments synced in parallel',
  controllers: () => ({ [CONTROLLER_NAME]: (ctx) => new DeploymentController(ctx) }),
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
