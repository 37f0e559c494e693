import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from './main.js';

const folder = mkdtempSync(join(tmpdir(), 'skiff-cli-image-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const run = (...argv: string[]) => main(argv, { out: () => undefined, err: () => undefined }, folder);

describe('skiff image', () => {
  it('needs the import subcommand and at least one archive', async () => {
    await expect(run('image')).rejects.toThrow('skiff image needs a subcommand: import');
    await expect(run('image', 'load', 'x.tar')).rejects.toThrow('unknown image subcommand "load" (known: import)');
    await expect(run('image', 'import')).rejects.toThrow('skiff image import needs at least one image archive (an OCI or docker-archive tar)');
  });

  it("looks for the nodes' containerd under the data dir the config file names, and says when none runs", async () => {
    writeFileSync(join(folder, 'skiff.config.json'), JSON.stringify({ preset: 'local', dataDir: 'state' }));
    await expect(run('image', 'import', 'busybox.tar')).rejects.toThrow(
      `no running containerd for any node under ${join(folder, 'state')}: start the cluster first (skiff up --preset local)`,
    );
    await expect(run('image', 'import', 'busybox.tar', '--data-dir', 'other', '--node', 'node-2')).rejects.toThrow(
      `no running containerd for node node-2 under ${join(folder, 'other')}`,
    );
  });
});
