import { definePlugin, packageInfo } from '@skiff/kernel';
import { createBalancedAllocation } from './balanced-allocation.js';
import { PLUGIN_NAME } from './names.js';
import { checkArgs, optionsSchema } from './options.js';

/** Registers the NodeResourcesBalancedAllocation score with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    checkArgs(options, 'options');
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createBalancedAllocation(options)));
  },
});

export type { BalancedAllocationOptions } from './options.js';
export { PLUGIN_NAME, NODE_RESOURCES_BALANCED_ALLOCATION } from './names.js';
