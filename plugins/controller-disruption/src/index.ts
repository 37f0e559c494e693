import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { DisruptionController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The disruption controller: the status of each PodDisruptionBudget, which the eviction subresource reads. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'PodDisruptionBudgets synced in parallel',
  controllers: () => ({ [CONTROLLER_NAME]: (ctx) => new DisruptionController(ctx) }),
});
export default plugin;

export type DisruptionControllerOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
