import { definePlugin, packageInfo } from '@skiff/kernel';
import { createResourcesFit } from './fit.js';
import { PLUGIN_NAME } from './names.js';
import { optionsSchema } from './options.js';

/** Registers the NodeResourcesFit filter with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createResourcesFit(options)));
  },
});

export type { ResourcesFitOptions } from './options.js';
export { PLUGIN_NAME, NODE_RESOURCES_FIT } from './names.js';
