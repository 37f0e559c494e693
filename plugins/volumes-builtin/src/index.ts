import { definePlugin, packageInfo } from '@skiff/kernel';
import { builtinVolumePlugins } from './builtin-plugins.js';
import { PLUGIN_NAME } from './names.js';
import { optionsSchema } from './options.js';

/** Registers emptyDir, configMap, secret, hostPath, projected, downwardAPI and persistentVolumeClaim with the kubelet. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    kernel.hooks.volumes.tap(PLUGIN_NAME, (registry) => {
      for (const plugin of builtinVolumePlugins(options)) registry.register(plugin);
    });
  },
});

export type { VolumesBuiltinOptions } from './options.js';
export { PLUGIN_NAME } from './names.js';
