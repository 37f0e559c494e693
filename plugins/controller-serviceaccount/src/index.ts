import { trackWork } from '@skiff/controller-manager';
import { definePlugin, type PluginOptions } from '@skiff/kernel';
import { ServiceAccountsController } from './controller.js';
import { CONTROLLER_NAME, DEFAULT_SERVICE_ACCOUNT, PLUGIN_NAME } from './names.js';

/** The ServiceAccount controller: a `default` ServiceAccount in every active namespace, recreated when deleted. */
const plugin = definePlugin({
  name: PLUGIN_NAME,
  version: '0.1.0',
  kernel: '^0.1.0',
  options: {
    type: 'object',
    properties: {
      serviceAccounts: {
        type: 'array',
        items: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' },
        default: [DEFAULT_SERVICE_ACCOUNT],
        description: 'The ServiceAccounts every active namespace holds',
      },
      workers: { type: 'integer', minimum: 1, description: "Namespaces worked on at once (default: the controller manager's workers)" },
    },
  },
  apply(kernel, options) {
    kernel.hooks.controllers.tap(PLUGIN_NAME, (registry) => {
      registry.register({
        name: CONTROLLER_NAME,
        start(ctx) {
          const controller = new ServiceAccountsController(ctx, options.serviceAccounts);
          trackWork(ctx, controller.run(options.workers ?? ctx.workers ?? 2));
        },
      });
    });
  },
});
export default plugin;

export type ServiceAccountControllerOptions = PluginOptions<typeof plugin>;

export { ServiceAccountsController, isActive } from './controller.js';
export { CONTROLLER_NAME, DEFAULT_SERVICE_ACCOUNT, PLUGIN_NAME } from './names.js';
export { SERVICE_ACCOUNTS, type ServiceAccount } from './resources.js';
