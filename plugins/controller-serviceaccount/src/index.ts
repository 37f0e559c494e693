import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { ServiceAccountsController } from './controller.js';
import { CONTROLLER_NAME, DEFAULT_SERVICE_ACCOUNT, PLUGIN_NAME } from './names.js';

/** The ServiceAccount controller: a `default` ServiceAccount in every active namespace, recreated when deleted. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'Namespaces worked on at once',
  options: {
    serviceAccounts: {
      type: 'array',
      items: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' },
      default: [DEFAULT_SERVICE_ACCOUNT],
      description: 'The ServiceAccounts every active namespace holds',
    },
  },
  controllers: (options) => ({ [CONTROLLER_NAME]: (ctx) => new ServiceAccountsController(ctx, options.serviceAccounts) }),
});
export default plugin;

export type ServiceAccountControllerOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
