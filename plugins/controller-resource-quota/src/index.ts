import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { ResourceQuotaController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The ResourceQuota controller: status.hard and status.used of every quota, kept in step with the namespace. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'Quotas counted at once',
  options: {
    resyncIntervalMs: {
      type: 'integer',
      minimum: 1000,
      default: 300_000,
      description: 'How often every quota is counted again in full (kube-controller-manager --resource-quota-sync-period)',
    },
  },
  controllers: (options) => ({ [CONTROLLER_NAME]: (ctx) => new ResourceQuotaController(ctx, { resyncIntervalMs: options.resyncIntervalMs }) }),
});
export default plugin;

export type ResourceQuotaControllerPluginOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
export { ResourceQuotaController } from './controller.js';
