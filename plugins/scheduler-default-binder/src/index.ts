import { definePlugin, packageInfo } from '@skiff/kernel';
import { createDefaultBinder } from './default-binder.js';
import { PLUGIN_NAME } from './names.js';

/** Registers the DefaultBinder bind with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply(kernel) {
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createDefaultBinder()));
  },
});

export { PLUGIN_NAME, DEFAULT_BINDER } from './names.js';
