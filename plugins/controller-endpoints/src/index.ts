import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { EndpointsController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The Endpoints controller: the core/v1 Endpoints of each Service with a selector, from its pods. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'Services synced in parallel',
  controllers: () => ({ [CONTROLLER_NAME]: (ctx) => new EndpointsController(ctx) }),
});
export default plugin;

export type EndpointsControllerOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
