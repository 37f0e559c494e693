import { definePlugin, packageInfo } from '@skiff/kernel';
import { PLUGIN_NAME } from './names.js';
import { createTaintToleration } from './taint-toleration.js';

/** Registers TaintToleration (filter and score) with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply(kernel) {
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createTaintToleration()));
  },
});

export { createTaintToleration, firstUntoleratedTaint, intolerablePreferNoScheduleTaints } from './taint-toleration.js';
export { PLUGIN_NAME, TAINT_TOLERATION, TAINT_TOLERATION_WEIGHT, untoleratedTaintReason } from './names.js';
