import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { DaemonSetController } from './controller.js';
import { CONTROLLER_NAME, NODE_AFFINITY_FILTER, PLUGIN_NAME } from './names.js';
import { nodeAffinityFilter } from './node-affinity-filter.js';

/** The DaemonSet controller: one pod per eligible node, rolling updates, history and status. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'DaemonSets synced in parallel',
  options: {
    nodeAffinityFilter: {
      type: 'boolean',
      default: true,
      description: 'register the scheduler filter NodeAffinity (nodeSelector and required node affinity) unless a plugin of that name is already registered',
    },
  },
  controllers: () => ({ [CONTROLLER_NAME]: (ctx) => new DaemonSetController(ctx) }),
  apply(kernel, options) {
    if (options.nodeAffinityFilter !== false) {
      kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => {
        if (!registry.get(NODE_AFFINITY_FILTER)) registry.register(nodeAffinityFilter);
      });
    }
  },
});
export default plugin;

export type DaemonSetControllerOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, NODE_AFFINITY_FILTER, PLUGIN_NAME } from './names.js';
