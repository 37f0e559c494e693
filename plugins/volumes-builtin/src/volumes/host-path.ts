import { lstat, mkdir, open, stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import type { Pod } from '@skiff/api';
import type { VolumePlugin } from '@skiff/kernel';
import { VolumeError } from '../errors.js';
import { VOLUME_PLUGIN } from '../names.js';
import { isObject, podVolume, type Json } from './common.js';

type FileKind = 'directory' | 'file' | 'socket' | 'char' | 'block' | 'missing' | 'other';

async function kindOf(path: string): Promise<FileKind> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return (await lstat(path).catch(() => undefined)) ? 'other' : 'missing';
  if (info.isDirectory()) return 'directory';
  if (info.isFile()) return 'file';
  if (info.isSocket()) return 'socket';
  if (info.isCharacterDevice()) return 'char';
  if (info.isBlockDevice()) return 'block';
  return 'other';
}

/** What each hostPath type demands of the path, and how Kubernetes words the failed check. */
const CHECKS: Readonly<Record<string, { kind: FileKind; what: string }>> = {
  DirectoryOrCreate: { kind: 'directory', what: 'a directory' },
  Directory: { kind: 'directory', what: 'a directory' },
  FileOrCreate: { kind: 'file', what: 'a file' },
  File: { kind: 'file', what: 'a file' },
  Socket: { kind: 'socket', what: 'a socket file' },
  CharDevice: { kind: 'char', what: 'a character device' },
  BlockDevice: { kind: 'block', what: 'a block device' },
};

/**
 * hostPath: a path of the node, mounted as it is. `DirectoryOrCreate` makes a missing folder (0755),
 * `FileOrCreate` a missing empty file (0644); the other types only check what is there. Nothing is created under
 * the pod's folder and nothing is removed when the pod goes.
 */
export function hostPathPlugin(): VolumePlugin {
  return {
    name: VOLUME_PLUGIN.HOST_PATH,
    canSupport: (volume) => isObject(volume.hostPath),
    async setUp(_pod: Pod, volume: Json) {
      const { path, type = '' } = podVolume(volume).hostPath ?? { path: '' };
      if (!isAbsolute(path ?? '')) throw new VolumeError('SKIFF_ERR_VOLUME_HOST_PATH_RELATIVE', { path: String(path) });
      const check = CHECKS[type];
      if (check) {
        let kind = await kindOf(path);
        if (kind === 'missing' && type === 'DirectoryOrCreate') await mkdir(path, { recursive: true, mode: 0o755 });
        if (kind === 'missing' && type === 'FileOrCreate') await (await open(path, 'a', 0o644)).close();
        if (kind === 'missing') kind = await kindOf(path);
        if (kind !== check.kind) throw new VolumeError('SKIFF_ERR_VOLUME_HOST_PATH_TYPE', { path, what: check.what });
      }
      return { path };
    },
    async tearDown() {
      // The host's path is not the pod's to remove.
    },
  };
}
