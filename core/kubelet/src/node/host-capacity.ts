import { statfs } from 'node:fs/promises';
import { availableParallelism, totalmem } from 'node:os';
import type { NodeCapacity } from './node-object.js';

/** Bytes as the kubelet reports machine sizes: whole kibibytes (`16314664Ki`). */
function kibibytes(bytes: number): string {
  return `${Math.floor(bytes / 1024)}Ki`;
}

/**
 * What this machine offers, as a kubelet on it reports it: its CPUs (the ones this process may use), its memory,
 * and the size of the file system the node's data dir is on as ephemeral-storage. `pods` stays as configured.
 */
export async function hostCapacity(dataDir: string, pods: number): Promise<NodeCapacity> {
  const disk = await statfs(dataDir);
  return {
    cpu: String(availableParallelism()),
    memory: kibibytes(totalmem()),
    ephemeralStorage: kibibytes(disk.blocks * disk.bsize),
    pods,
  };
}
