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

export { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
