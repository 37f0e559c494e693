import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { DaemonSetController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The DaemonSet controller: one pod per eligible node, rolling updates, history and status. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'DaemonSets synced in parallel',
  controllers: () => ({ [CONTROLLER_NAME]: (ctx) => new DaemonSetController(ctx) }),
});
export default plugin;

export type DaemonSetControllerOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
