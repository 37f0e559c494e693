import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { errorMessage } from '@skiff/api';
import { mountPoints } from '@skiff/node-host';
import { VolumeError } from './errors.js';

const run = promisify(execFile);

/** Mounting a tmpfs takes root (CAP_SYS_ADMIN); a kubelet without it falls back to plain folders. */
export function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

export async function isMountPoint(path: string): Promise<boolean> {
  return (await mountPoints()).includes(resolve(path));
}

/** Mounts a tmpfs on `dir` (which must exist), limited to `sizeBytes` when given. */
export async function mountTmpfs(dir: string, mode: number, sizeBytes?: number): Promise<void> {
  const options = [`mode=${mode.toString(8)}`, ...(sizeBytes ? [`size=${sizeBytes}`] : [])].join(',');
  try {
    await run('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
  } catch (err) {
    throw new VolumeError('SKIFF_ERR_VOLUME_MOUNT', {
      what: 'tmpfs',
      path: dir,
      detail: ((err as { stderr?: string }).stderr || errorMessage(err)).trim(),
    });
  }
}

export async function unmount(dir: string): Promise<void> {
  if (!(await isMountPoint(dir))) return;
  await run('umount', [dir]);
}
