import { definePlugin, packageInfo } from '@skiff/kernel';
import { createNodeName } from './node-name.js';
import { PLUGIN_NAME } from './names.js';

/** Registers the NodeName filter with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply(kernel) {
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createNodeName()));
  },
});

export { createNodeName } from './node-name.js';
export { PLUGIN_NAME, NODE_NAME, NODE_NAME_MISMATCH } from './names.js';
