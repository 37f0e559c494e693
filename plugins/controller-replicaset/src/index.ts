import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { ReplicaSetController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The ReplicaSet controller: keeps each ReplicaSet's pods at `spec.replicas`. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'ReplicaSets synced in parallel',
  controllers: () => ({ [CONTROLLER_NAME]: (ctx) => new ReplicaSetController(ctx) }),
});
export default plugin;

export type ReplicaSetControllerOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
export { POD_DELETION_COST_ANNOTATION } from './pod-ranking.js';
