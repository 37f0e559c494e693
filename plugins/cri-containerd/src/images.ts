import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stateDirFor } from './daemon.js';
import { ContainerdError } from './errors.js';
import { CRI_NAMESPACE, NODE_FOLDER } from './names.js';

// Also the package's `./images` entry: what tools outside the kubelet (`skiff image import`) need to load
// images into the containerd a node runs.

const run = promisify(execFile);

/** The socket of the containerd this plugin starts for a node, from the node's data folder. */
export function nodeContainerdSocket(nodeDataDir: string): string {
  return join(stateDirFor(join(nodeDataDir, NODE_FOLDER)), 'containerd.sock');
}

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
