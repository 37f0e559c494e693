import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type * as ContainerdImages from '@skiff/plugin-cri-containerd/images';
import { clusterDataDir } from './cluster-dir.js';
import type { Output } from './up.js';

/** The containerd plugin's image tools, loaded only when an image command runs (the dev preset has no containerd). */
async function containerdImages(): Promise<typeof ContainerdImages> {
  try {
    return await import('@skiff/plugin-cri-containerd/images');
  } catch {
    throw new Error('skiff image needs @skiff/plugin-cri-containerd (npm install @skiff/plugin-cri-containerd)');
  }
}

/**
 * `skiff image import FILE… [--data-dir DIR] [--node NAME]`: loads image archives into the containerd of each
 * node of a running local cluster, for machines without a registry (as `kind load image-archive` does).
 */
export async function image(argv: string[], output: Output, cwd: string): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { 'data-dir': { type: 'string' }, config: { type: 'string', short: 'c' }, node: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  });
  const [verb, ...files] = positionals;
  if (verb !== 'import') throw new Error(verb === undefined ? 'skiff image needs a subcommand: import' : `unknown image subcommand "${verb}" (known: import)`);
  if (files.length === 0) throw new Error('skiff image import needs at least one image archive (an OCI or docker-archive tar)');
  // The cluster's data dir as `skiff up` finds it: the flag, else the config file's (from its own folder).
  const dataDir = await clusterDataDir(cwd, { dataDir: values['data-dir'], configFile: values.config });
  const nodesDir = join(dataDir, 'nodes');
  const nodes = values.node ? [values.node] : existsSync(nodesDir) ? readdirSync(nodesDir).sort() : [];
  const { importImageArchive, nodeContainerdSocket } = await containerdImages();
  const running = nodes.map((node) => ({ node, socket: nodeContainerdSocket(join(nodesDir, node)) })).filter(({ socket }) => existsSync(socket));
  if (running.length === 0) {
    const which = values.node ? `node ${values.node}` : 'any node';
    throw new Error(`no running containerd for ${which} under ${dataDir}: start the cluster first (skiff up --preset local)`);
  }
  for (const file of files) {
    const path = resolve(cwd, file);
    if (!existsSync(path)) throw new Error(`no such image archive: ${file}`);
    for (const { node, socket } of running) {
      const names = await importImageArchive(socket, path);
      output.out(`${node}: imported ${names.join(', ') || file}`);
    }
  }
}
