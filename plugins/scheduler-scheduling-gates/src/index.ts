import { definePlugin, packageInfo } from '@skiff/kernel';
import { PLUGIN_NAME } from './names.js';
import { createSchedulingGates } from './scheduling-gates.js';

/** Registers the SchedulingGates preEnqueue with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply(kernel) {
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createSchedulingGates()));
  },
});

export { PLUGIN_NAME, SCHEDULING_GATES } from './names.js';
