import { definePlugin, type OptionsSchema } from '@skiff/kernel';
import { createLeastAllocated, DEFAULT_RESOURCES, type LeastAllocatedOptions } from './least-allocated.js';
import { PLUGIN_NAME } from './names.js';

export const optionsSchema: OptionsSchema = {
  type: 'object',
  properties: {
    resources: {
      type: 'array',
      description: 'resources to score and their weights',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, weight: { type: 'number', minimum: 0 } },
        required: ['name', 'weight'],
      },
      default: DEFAULT_RESOURCES.map((resource) => ({ ...resource })),
    },
    weight: { type: 'number', minimum: 0, default: 1, description: 'the score weight when the profile names none' },
  },
};

/** Registers the NodeResourcesLeastAllocated score with the scheduler. */
export default definePlugin<LeastAllocatedOptions>({
  name: PLUGIN_NAME,
  version: '0.1.0',
  kernel: '^0.1.0',
  options: optionsSchema,
  apply(kernel, options) {
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createLeastAllocated(options)));
  },
});

export { createLeastAllocated, leastAllocatedScore, DEFAULT_RESOURCES, type LeastAllocatedOptions, type ResourceWeight } from './least-allocated.js';
export { PLUGIN_NAME, NODE_RESOURCES_LEAST_ALLOCATED } from './names.js';
