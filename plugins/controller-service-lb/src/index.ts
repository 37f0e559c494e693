import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { ServiceLBController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** LoadBalancer Services get the nodes' InternalIP addresses as their ingress, as small local clusters do. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'Services worked on at once',
  controllers: () => ({ [CONTROLLER_NAME]: (ctx) => new ServiceLBController(ctx) }),
});
export default plugin;

export type ServiceLBOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, EXCLUDE_LABEL, PLUGIN_NAME } from './names.js';
