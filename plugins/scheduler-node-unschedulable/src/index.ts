import { definePlugin, packageInfo } from '@skiff/kernel';
import { createNodeUnschedulable } from './node-unschedulable.js';
import { PLUGIN_NAME } from './names.js';

/** Registers the NodeUnschedulable filter with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply(kernel) {
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createNodeUnschedulable()));
  },
});

export { createNodeUnschedulable } from './node-unschedulable.js';
export { PLUGIN_NAME, NODE_UNSCHEDULABLE, NODE_UNSCHEDULABLE_REASON, UNSCHEDULABLE_TAINT } from './names.js';
