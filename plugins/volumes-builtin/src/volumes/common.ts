import { chmod, lstat, mkdir, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Volume } from '@skiff/api';
import type { VolumeContext } from '@skiff/kernel';
import { VolumeError } from '../errors.js';
import { isMountPoint, mountTmpfs, runningAsRoot, unmount } from '../tmpfs.js';

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A volume as its pod declares it. VolumePlugin hands each entry of `pod.spec.volumes` over as plain JSON; the API
 * server has validated it as a Volume, so the plugins read it as one, converted here alone.
 */
export const podVolume = (volume: Json): Volume => volume as unknown as Volume;

/** What every built-in plugin is configured with (the package's options). */
export interface BuiltinVolumeOptions {
  /** Memory-medium emptyDirs are a tmpfs when the kubelet runs as root. */
  tmpfs: boolean;
  /** Secret and projected volumes are a tmpfs when the kubelet runs as root. */
  secretsOnTmpfs: boolean;
}

export function requireContext(context: VolumeContext | undefined, plugin: string, volume: Json): VolumeContext {
  if (!context) throw new VolumeError('SKIFF_ERR_VOLUME_NO_CONTEXT', { plugin, volume: String(volume.name ?? '') });
  return context;
}

/**
 * A path of the node as the kubelet reaches it: the path itself, or its stand-in under the context's `hostRoot`
 * (a simulated node). `..` cannot climb out of the stand-in: the path is resolved from `/` first.
 */
export function onNode(context: VolumeContext | undefined, path: string): string {
  const root = context?.hostRoot;
  return root && root !== '/' ? join(root, resolve('/', path)) : path;
}

/** Whether anything (a file, folder or symlink, dangling or not) is at `path`. */
export async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Makes the volume folder, on a tmpfs when asked and possible (root, `tmpfs` option on). Answers what it could
 * not do, for the caller to tell: undefined when the folder is what was asked for.
 */
export async function makeVolumeDir(dir: string, mode: number, memory: { wanted: boolean; allowed: boolean; sizeBytes?: number }): Promise<string | undefined> {
  await mkdir(dir, { recursive: true, mode });
  let shortfall: string | undefined;
  if (memory.wanted) {
    if (!memory.allowed) shortfall = 'tmpfs is turned off for this node';
    else if (!runningAsRoot()) shortfall = 'the kubelet does not run as root';
    else if (!(await isMountPoint(dir)))
      shortfall = await mountTmpfs(dir, mode, memory.sizeBytes).then(
        () => undefined,
        (err: Error) => err.message,
      );
  }
  await chmod(dir, mode);
  return shortfall;
}

/** Unmounts a tmpfs volume folder if it is one, then removes it. */
export async function removeVolumeDir(dir: string, context: VolumeContext | undefined): Promise<void> {
  try {
    await unmount(dir);
  } catch (err) {
    context?.logger.warn({ err, volume: basename(dir) }, 'unmounting a volume failed');
    throw err;
  }
  await rm(dir, { recursive: true, force: true });
}
