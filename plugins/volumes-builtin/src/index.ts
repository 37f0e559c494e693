import { definePlugin, packageInfo, type VolumePlugin } from '@skiff/kernel';
import { PLUGIN_NAME } from './names.js';
import { optionsSchema, type VolumesBuiltinOptions } from './options.js';
import { ServiceAccountTokens } from './service-account-tokens.js';
import { emptyDirPlugin } from './volumes/empty-dir.js';
import { hostPathPlugin } from './volumes/host-path.js';
import { persistentVolumeClaimPlugin } from './volumes/persistent-volume-claim.js';
import { configMapPlugin, downwardAPIPlugin, projectedPlugin, secretPlugin } from './volumes/projections.js';

export { optionsSchema, type VolumesBuiltinOptions } from './options.js';

/** Every built-in volume plugin, configured with the package's options. */
export function builtinVolumePlugins(options: VolumesBuiltinOptions = { tmpfs: true, secretsOnTmpfs: false }): VolumePlugin[] {
  const tokens = new ServiceAccountTokens();
  return [
    emptyDirPlugin(options),
    configMapPlugin(options),
    secretPlugin(options),
    hostPathPlugin(),
    projectedPlugin(options, tokens),
    downwardAPIPlugin(options),
    persistentVolumeClaimPlugin(),
  ];
}

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

export { writeAtomically, checkPayloadPath, type Payload, type PayloadFile } from './atomic-writer.js';
export { ServiceAccountTokens } from './service-account-tokens.js';
export { VolumeError, VOLUME_ERRORS, type VolumeErrorCode } from './errors.js';
export { PLUGIN_NAME, VOLUME_PLUGIN, DATA_LINK, TMPFS_UNAVAILABLE_REASON } from './names.js';
