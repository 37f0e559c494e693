import { lstat, open, stat } from 'node:fs/promises';
import { dirname, isAbsolute } from 'node:path';
import type { Pod } from '@skiff/api';
import { mkdirExact, type VolumeContext, type VolumePlugin } from '@skiff/kernel';
import { VolumeError } from '../errors.js';
import { VOLUME_PLUGIN } from '../names.js';
import { isObject, onNode, podVolume, type Json } from './common.js';

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
 * On a simulated node the path's stand-in is made as the pod's type says it should be found — a folder (also for
 * no type), or an empty file — so the simulated node has whatever its pods expect, and the machine is neither
 * read nor changed. Sockets and devices cannot be made: they count as there. Answers the kind the stand-in has.
 */
async function makeStandIn(target: string, type: string): Promise<FileKind> {
  const expected = CHECKS[type]?.kind ?? 'directory';
  if (expected === 'directory') await mkdirExact(target, 0o755);
  else if (expected === 'file') {
    await mkdirExact(dirname(target), 0o755);
    await createFile(target);
  }
  return expected;
}

/** A new empty file of exactly 0644, whatever the process's umask; a file already there is left as it is. */
async function createFile(target: string): Promise<void> {
  const handle = await open(target, 'wx', 0o644).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EEXIST') return undefined;
    throw err;
  });
  if (!handle) return;
  try {
    await handle.chmod(0o644);
  } finally {
    await handle.close();
  }
}

/**
 * hostPath: a path of the node, mounted as it is. `DirectoryOrCreate` makes a missing folder (0755),
 * `FileOrCreate` a missing empty file (0644); the other types only check what is there. Nothing is created under
 * the pod's folder and nothing is removed when the pod goes. On a simulated node (the context's `hostRoot` is not
 * `/`) the path is a stand-in under the node's folder, made by `makeStandIn`: no pod ever creates anything on the
 * machine the cluster runs on.
 */
export function hostPathPlugin(): VolumePlugin {
  return {
    name: VOLUME_PLUGIN.HOST_PATH,
    canSupport: (volume) => isObject(volume.hostPath),
    async setUp(_pod: Pod, volume: Json, _dir: string, context?: VolumeContext) {
      const { path, type = '' } = podVolume(volume).hostPath ?? { path: '' };
      if (!isAbsolute(path ?? '')) throw new VolumeError('SKIFF_ERR_VOLUME_HOST_PATH_RELATIVE', { path: String(path) });
      const target = onNode(context, path);
      const check = CHECKS[type];
      let kind = await kindOf(target);
      if (kind === 'missing' && target !== path) kind = await makeStandIn(target, type);
      if (!check) return { path: target };
      if (kind === 'missing' && type === 'DirectoryOrCreate') await mkdirExact(target, 0o755);
      if (kind === 'missing' && type === 'FileOrCreate') await createFile(target);
      if (kind === 'missing') kind = await kindOf(target);
      if (kind !== check.kind) throw new VolumeError('SKIFF_ERR_VOLUME_HOST_PATH_TYPE', { path, what: check.what });
      return { path: target };
    },
    async tearDown() {
      // The host's path is not the pod's to remove.
    },
  };
}
