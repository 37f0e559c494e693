import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { ReplicaSetController } from './controller.js';
import { REPLICA_SETS, REPLICATION_CONTROLLERS } from './kinds.js';
import { PLUGIN_NAME } from './names.js';

/**
 * The ReplicaSet and ReplicationController controllers: keep each object's pods at `spec.replicas`.
 * One implementation serves both; a ReplicationController is handled as a ReplicaSet.
 */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'objects synced in parallel, by each of the two controllers',
  controllers: () => ({
    [REPLICA_SETS.controllerName]: (ctx) => new ReplicaSetController(ctx, REPLICA_SETS),
    [REPLICATION_CONTROLLERS.controllerName]: (ctx) => new ReplicaSetController(ctx, REPLICATION_CONTROLLERS),
  }),
});
export default plugin;

export type ReplicaSetControllerOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME, REPLICATION_CONTROLLER_NAME } from './names.js';
export { POD_DELETION_COST_ANNOTATION } from './pod-ranking.js';
