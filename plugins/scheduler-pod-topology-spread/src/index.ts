import { definePlugin, packageInfo } from '@skiff/kernel';
import { PLUGIN_NAME } from './names.js';
import { checkArgs, optionsSchema } from './options.js';
import { createPodTopologySpread } from './plugin.js';

/** Registers the PodTopologySpread filter and score with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    const args = checkArgs(options, 'options');
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createPodTopologySpread(args)));
  },
});

export type { PodTopologySpreadOptions } from './options.js';
export { PLUGIN_NAME, POD_TOPOLOGY_SPREAD, REASON_CONSTRAINTS_NOT_MATCH, REASON_NODE_LABEL_NOT_MATCH } from './names.js';
