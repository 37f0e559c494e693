import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EtcdCluster } from '@skiff/plugin-store-etcd/testing';
import { afterAll, beforeAll } from 'vitest';
import { dumpEtcd } from './etcd-dump.js';
import { tempDir } from './harness.js';
import { describeHostileInput } from './hostile-input.js';

// The hostile-input suite (hostile-input.ts) on etcd: a one-member EtcdCluster (Debian's etcd on a loopback port),
// the cluster's keys under a prefix of its own, dumped over etcd's JSON gateway. Declared before the suite, these
// hooks run before its beforeAll and after its afterAll (vitest runs after-hooks in reverse order).

const KEY_PREFIX = '/hostile-input';
let etcd: EtcdCluster;
let configDir: string;
let configFile: string;

beforeAll(async () => {
  etcd = await EtcdCluster.start(1);
  configDir = tempDir('hostile-input-etcd-config');
  configFile = join(configDir, 'skiff.config.json');
  const config = {
    preset: 'dev',
    plugins: [
      ['@skiff/store', false],
      ['@skiff/plugin-store-etcd', { endpoints: etcd.endpoints, keyPrefix: KEY_PREFIX, compactionIntervalMs: 0 }],
      // On a shared store (etcd) the default reconciler renews a Lease every 10 s, a write between cases that no
      // request made. One API server needs none: 'single' writes the kubernetes endpoints once, as on LMDB.
      ['@skiff/plugin-service-allocator', { endpointReconciler: { type: 'single' } }],
    ],
  };
  writeFileSync(configFile, JSON.stringify(config));
}, 60_000);

afterAll(async () => {
  await etcd?.stop();
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

describeHostileInput({
  name: 'etcd',
  args: () => ['--config', configFile],
  dump: () => dumpEtcd(etcd.endpoint(0), KEY_PREFIX),
});
