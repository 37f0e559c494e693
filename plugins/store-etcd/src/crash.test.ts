import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { checkAcknowledgedWritesSurvive } from '@skiff/testing/store-durability';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openEtcdStore } from './etcd-store.js';
import { EtcdCluster } from './testing.js';

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
let etcd: EtcdCluster;
let workDir: string;
let writerScript: string;
const children: ChildProcess[] = [];

/** Workspace packages are bundled from their sources; npm packages (@grpc/grpc-js, protobufjs…) load from node_modules. */
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
  workDir = await mkdtemp(join(cacheDir, 'etcd-crash-'));
  writerScript = join(workDir, 'etcd-writer.mjs');
  const [cluster] = await Promise.all([
    EtcdCluster.start(1),
    build({
      entryPoints: [join(packageDir, 'src', 'test-support', 'etcd-writer.ts')],
      outfile: writerScript,
      bundle: true,
      conditions: ['source'],
      plugins: [npmPackagesExternal],
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'silent',
    }),
  ]);
  etcd = cluster;
}, 60_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await etcd?.stop();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

function spawnWriter(keyPrefix: string, prefix: string): ChildProcess {
  const child = spawn(process.execPath, [writerScript, etcd.endpoints.join(','), keyPrefix, prefix], { stdio: 'pipe' });
  children.push(child);
  return child;
}

it('keeps every write an EtcdStore acknowledged before its process (the API server) was killed with SIGKILL', async () => {
  const keyPrefix = '/crash-apiserver';
  const prefix = '/registry/configmaps/crash/';
  const { store, acked } = await checkAcknowledgedWritesSurvive({
    prefix,
    spawnWriter: () => spawnWriter(keyPrefix, prefix),
    reopen: () => openEtcdStore({ endpoints: etcd.endpoints, keyPrefix, compactionIntervalMs: 0 }),
  });
  try {
    expect(acked.size).toBeGreaterThanOrEqual(400);
    // The writes sit under the writer's keyPrefix: a store without it sees them under the prefixed key.
    const unprefixed = await openEtcdStore({ endpoints: etcd.endpoints, compactionIntervalMs: 0 });
    try {
      const [key, revision] = [...acked][0]!;
      expect((await unprefixed.get(`${keyPrefix}${key}`))?.revision).toBe(revision);
      expect(await unprefixed.get(key)).toBeUndefined();
    } finally {
      await unprefixed.close();
    }
  } finally {
    await store.close();
  }
}, 60_000);

it('keeps them when the etcd member is killed with SIGKILL right after the API server, as when the machine dies', async () => {
  const keyPrefix = '/crash-machine';
  const prefix = '/registry/configmaps/crash/';
  const { store, acked } = await checkAcknowledgedWritesSurvive({
    prefix,
    spawnWriter: () => spawnWriter(keyPrefix, prefix),
    reopen: async () => {
      // etcd acknowledges a write once its WAL entry is fsynced: a member killed now starts again with all of them.
      await etcd.kill(0);
      await etcd.restart(0);
      return openEtcdStore({ endpoints: etcd.endpoints, keyPrefix, compactionIntervalMs: 0 });
    },
  });
  try {
    expect(acked.size).toBeGreaterThanOrEqual(400);
  } finally {
    await store.close();
  }
}, 60_000);
