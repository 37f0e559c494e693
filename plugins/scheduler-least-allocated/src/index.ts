import { definePlugin, packageInfo } from '@skiff/kernel';
import { createLeastAllocated } from './least-allocated.js';
import { PLUGIN_NAME } from './names.js';
import { optionsSchema } from './options.js';

/** Registers the NodeResourcesLeastAllocated score with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createLeastAllocated(options)));
  },
});

export { DEFAULT_RESOURCES, type LeastAllocatedOptions, type ResourceWeight } from './options.js';
export { PLUGIN_NAME, NODE_RESOURCES_LEAST_ALLOCATED } from './names.js';
