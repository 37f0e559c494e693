import { definePlugin, packageInfo } from '@skiff/kernel';
import { createImageLocality } from './image-locality.js';
import { PLUGIN_NAME } from './names.js';

/** Registers the ImageLocality score with the scheduler. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply(kernel) {
    kernel.hooks.schedulerPlugins.tap(PLUGIN_NAME, (registry) => registry.register(createImageLocality()));
  },
});

export { PLUGIN_NAME, IMAGE_LOCALITY } from './names.js';
