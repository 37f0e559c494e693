import { definePlugin, packageInfo } from '@skiff/kernel';
import { createNodeAffinity } from './node-affinity.js';
import { PLUGIN_NAME } from './names.js';
import { checkArgs, optionsSchema } from './options.js';

/** Registers NodeAffinity (preFilter, filter and score) with the scheduler; its options are NodeAffinityArgs. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    const args = checkArgs(options, 'options');
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createNodeAffinity(args)));
  },
});

export { createNodeAffinity, requiredNodeNames } from './node-affinity.js';
export { checkArgs, optionsSchema, type NodeAffinityArgs } from './options.js';
export { NodeAffinityError, NODE_AFFINITY_ERRORS, type NodeAffinityErrorCode } from './errors.js';
export { PLUGIN_NAME, NODE_AFFINITY, NODE_AFFINITY_WEIGHT, NODE_AFFINITY_REASON } from './names.js';
