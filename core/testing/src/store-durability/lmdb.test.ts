import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LmdbStore } from '@skiff/store';
import { checkAcknowledgedWritesSurvive } from './index.js';

const packageDir = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
let workDir: string;
let writerScript: string;
const children: ChildProcess[] = [];

/** Workspace packages are bundled from their sources; npm packages (lmdb, pino…) load from node_modules. */
const npmPackagesExternal: Plugin = {
  name: 'npm-packages-external',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@skiff/') ? undefined : { path: args.path, external: true }));
  },
};

beforeAll(async () => {
  // Under the package, so that the bundle's external imports resolve from node_modules as the sources' do.
  const cacheDir = join(packageDir, 'node_modules', '.cache');
  await mkdir(cacheDir, { recursive: true });
  workDir = await mkdtemp(join(cacheDir, 'store-durability-'));
  writerScript = join(workDir, 'lmdb-writer.mjs');
  await build({
    entryPoints: [join(packageDir, 'src', 'test-support', 'lmdb-writer.ts')],
    outfile: writerScript,
    bundle: true,
    conditions: ['source'],
    plugins: [npmPackagesExternal],
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
  });
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(workDir, { recursive: true, force: true });
});

it('keeps every write an LmdbStore acknowledged before its process was killed with SIGKILL', async () => {
  const path = join(workDir, 'data');
  const prefix = '/registry/configmaps/crash/';
  const { store, acked } = await checkAcknowledgedWritesSurvive({
    prefix,
    spawnWriter: () => {
      const child = spawn(process.execPath, [writerScript, path, prefix], { stdio: 'pipe' });
      children.push(child);
      return child;
    },
    reopen: async () => new LmdbStore({ path, compactionIntervalMs: 0 }),
  });
  try {
    expect(acked.size).toBeGreaterThanOrEqual(400);
    // On a fresh LMDB store revisions start at 1 and leave no gap.
    expect(Math.min(...acked.values())).toBe(1);
  } finally {
    await store.close();
  }
});

it('names a lost write when the reopened store does not hold what was acknowledged', async () => {
  const path = join(workDir, 'written');
  const prefix = '/registry/configmaps/lost/';
  const elsewhere = new LmdbStore({ path: join(workDir, 'elsewhere'), compactionIntervalMs: 0 });
  let failure: unknown;
  try {
    await checkAcknowledgedWritesSurvive({
      prefix,
      killAfter: 20,
      spawnWriter: () => {
        const child = spawn(process.execPath, [writerScript, path, prefix], { stdio: 'pipe' });
        children.push(child);
        return child;
      },
      reopen: async () => elsewhere,
    });
  } catch (error) {
    failure = error;
  }
  expect(failure).toBeInstanceOf(Error);
  expect((failure as Error).message).toMatch(/revision/);
  await expect(elsewhere.get(`${prefix}0`)).rejects.toMatchObject({ kind: 'Closed' });
});
