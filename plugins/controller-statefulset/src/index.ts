import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { StatefulSetController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The StatefulSet controller: ordered, stable pod identities and PersistentVolumeClaims, rolling updates, status. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'StatefulSets synced in parallel',
  controllers: () => ({ [CONTROLLER_NAME]: (ctx) => new StatefulSetController(ctx) }),
});
export default plugin;

export type StatefulSetControllerOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
