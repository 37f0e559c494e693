import { definePlugin, packageInfo } from '@skiff/kernel';
import { createInterPodAffinity } from './inter-pod-affinity.js';
import { PLUGIN_NAME } from './names.js';
import { optionsSchema } from './options.js';

/** Registers the InterPodAffinity filter and score with the scheduler; the options are InterPodAffinityArgs. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createInterPodAffinity(options)));
  },
});

export { createInterPodAffinity, INTER_POD_AFFINITY_EVENTS } from './inter-pod-affinity.js';
export type { InterPodAffinityArgs } from './options.js';
export { PLUGIN_NAME, INTER_POD_AFFINITY, REASON_AFFINITY, REASON_ANTI_AFFINITY, REASON_EXISTING_ANTI_AFFINITY } from './names.js';
