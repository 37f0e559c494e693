import { parseBytes, type Pod } from '@skiff/api';
import type { VolumeContext, VolumePlugin } from '@skiff/kernel';
import { VolumeError } from '../errors.js';
import { EMPTY_DIR_MODE, TMPFS_UNAVAILABLE_REASON, VOLUME_PLUGIN } from '../names.js';
import { exists, isObject, makeVolumeDir, podVolume, removeVolumeDir, type BuiltinVolumeOptions, type Json } from './common.js';

/**
 * emptyDir: a world-writable folder that lives as long as the pod. `medium: Memory` is a tmpfs (limited to
 * `sizeLimit`) when the kubelet runs as root; otherwise a plain folder, and a warning event says so.
 */
export function emptyDirPlugin(options: BuiltinVolumeOptions): VolumePlugin {
  return {
    name: VOLUME_PLUGIN.EMPTY_DIR,
    canSupport: (volume) => isObject(volume.emptyDir),
    async setUp(_pod: Pod, volume: Json, dir: string, context?: VolumeContext) {
      const source = podVolume(volume).emptyDir ?? {};
      const medium = source.medium ?? '';
      if (medium !== '' && medium !== 'Memory')
        throw new VolumeError('SKIFF_ERR_VOLUME_MOUNT', { what: `emptyDir medium ${medium}`, path: dir, detail: 'not supported' });
      const fresh = !(await exists(dir));
      const sizeBytes = source.sizeLimit !== undefined ? parseBytes(source.sizeLimit) : undefined;
      const shortfall = await makeVolumeDir(dir, EMPTY_DIR_MODE, { wanted: medium === 'Memory', allowed: options.tmpfs, sizeBytes });
      if (shortfall && fresh)
        context?.event(
          'Warning',
          TMPFS_UNAVAILABLE_REASON,
          `emptyDir volume "${String(volume.name)}" asks for medium Memory, but it is a folder on disk: ${shortfall}`,
        );
    },
    tearDown: (_pod, _name, dir, context) => removeVolumeDir(dir, context),
  };
}
