import { definePlugin, packageInfo } from '@skiff/kernel';
import { PLUGIN_NAME } from './names.js';
import { createPrioritySort } from './priority-sort.js';

/** Registers the PrioritySort queue sort with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply(kernel) {
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createPrioritySort()));
  },
});

export { PLUGIN_NAME, PRIORITY_SORT } from './names.js';
