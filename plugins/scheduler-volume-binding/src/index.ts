import { definePlugin, packageInfo } from '@skiff/kernel';
import { PLUGIN_NAME } from './names.js';
import { optionsSchema } from './options.js';
import { checkVolumeBindingArgs, createVolumeBinding } from './volume-binding.js';

/** Registers the VolumeBinding plugin (preFilter, filter, reserve, preBind) with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    const plugin = createVolumeBinding(checkVolumeBindingArgs(options, 'options'));
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(plugin));
  },
});

export type { VolumeBindingOptions } from './options.js';
export { PLUGIN_NAME, VOLUME_BINDING } from './names.js';
