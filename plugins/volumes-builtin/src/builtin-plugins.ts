import type { VolumePlugin } from '@skiff/kernel';
import type { VolumesBuiltinOptions } from './options.js';
import { ServiceAccountTokens } from './service-account-tokens.js';
import { emptyDirPlugin } from './volumes/empty-dir.js';
import { hostPathPlugin } from './volumes/host-path.js';
import { persistentVolumeClaimPlugin } from './volumes/persistent-volume-claim.js';
import { configMapPlugin, downwardAPIPlugin, projectedPlugin, secretPlugin } from './volumes/projections.js';

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
