import { definePlugin, type OptionsSchema } from '@skiff/kernel';
import { createResourcesFit, type ResourcesFitOptions } from './fit.js';
import { PLUGIN_NAME } from './names.js';

export const optionsSchema: OptionsSchema = {
  type: 'object',
  properties: {
    ignoredResources: {
      type: 'array',
      items: { type: 'string' },
      default: [],
      description: 'extended resources the filter does not check',
    },
  },
};

/** Registers the NodeResourcesFit filter with the scheduler. */
export default definePlugin<ResourcesFitOptions>({
  name: PLUGIN_NAME,
  version: '0.1.0',
  kernel: '^0.1.0',
  options: optionsSchema,
  apply(kernel, options) {
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createResourcesFit(options)));
  },
});

export { createResourcesFit, insufficientResources, type ResourcesFitOptions } from './fit.js';
export { PLUGIN_NAME, NODE_RESOURCES_FIT } from './names.js';
