import { definePlugin, packageInfo } from '@skiff/kernel';
import { createDefaultPreemption } from './preemption.js';
import { PLUGIN_NAME } from './names.js';
import { checkArgs, optionsSchema } from './options.js';

/** Registers DefaultPreemption (PostFilter) with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    checkArgs(options, 'options');
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createDefaultPreemption(options)));
  },
});

export type { DefaultPreemptionOptions } from './options.js';
export { createDefaultPreemption, pickCandidate, splitByPdbViolation, type Candidate } from './preemption.js';
export { PLUGIN_NAME, DEFAULT_PREEMPTION, DISRUPTION_TARGET, PREEMPTION_BY_SCHEDULER } from './names.js';
