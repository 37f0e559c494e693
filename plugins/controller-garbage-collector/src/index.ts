import { controllerPlugin } from '@skiff/controller-manager';
import { KernelError, packageInfo, type PluginOptions } from '@skiff/kernel';
import { GarbageCollector } from './collector.js';
import { CONTROLLER_NAME, DEFAULT_RESOURCES, PLUGIN_NAME } from './names.js';
import { resolveResources } from './resources.js';

/** The garbage collector: deletes objects whose owners are gone, and carries out orphan and foreground deletion. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'Workers per queue, for dependents and for finalizing owners',
  options: {
    resources: {
      type: 'array',
      items: { type: 'string' },
      default: [...DEFAULT_RESOURCES],
      description: 'Resources whose objects may carry ownerReferences or be owners: plural names, optionally with their group ("pods", "replicasets.apps", …)',
    },
  },
  controllers(options) {
    let resources: ReturnType<typeof resolveResources>;
    try {
      resources = resolveResources(options.resources);
    } catch (err) {
      throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail: (err as Error).message });
    }
    return { [CONTROLLER_NAME]: (ctx) => new GarbageCollector(ctx, resources) };
  },
});
export default plugin;

export type GarbageCollectorOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, DEFAULT_RESOURCES, PLUGIN_NAME } from './names.js';
