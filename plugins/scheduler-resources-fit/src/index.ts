import { definePlugin, packageInfo } from '@skiff/kernel';
import { createResourcesFit } from './fit.js';
import { PLUGIN_NAME } from './names.js';
import { checkArgs, optionsSchema } from './options.js';

/** Registers NodeResourcesFit (filter and score) with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    checkArgs(options, 'options');
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createResourcesFit(options)));
  },
});

export type { ResourcesFitOptions } from './options.js';
export { PLUGIN_NAME, NODE_RESOURCES_FIT, LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO } from './names.js';
