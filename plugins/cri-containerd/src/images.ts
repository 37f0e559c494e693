import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ContainerdError } from './errors.js';
import { CRI_NAMESPACE } from './names.js';

const run = promisify(execFile);

/**
 * Imports an image archive (OCI layout or docker-archive tar) into containerd's CRI namespace with containerd's
 * own `ctr`, unpacked for the overlayfs snapshotter, so pods can use it without a registry.
 */
export async function importImageArchive(socket: string, file: string): Promise<string[]> {
  try {
    const { stdout } = await run('ctr', ['--address', socket, '--namespace', CRI_NAMESPACE, 'images', 'import', '--snapshotter', 'overlayfs', file], {
      maxBuffer: 1 << 20,
    });
    return stdout
      .split('\n')
      .map((line) => /^unpacking (\S+)/.exec(line)?.[1])
      .filter((name): name is string => !!name);
  } catch (err) {
    const detail = ((err as { stderr?: string }).stderr || (err as Error).message).trim().split('\n').pop() ?? '';
    throw new ContainerdError('SKIFF_ERR_CONTAINERD_IMPORT', { file, detail });
  }
}
