import { describeStoreContract } from '@skiff/testing/store-contract';
import { afterAll, beforeAll } from 'vitest';
import { openEtcdStore } from './etcd-store.js';
import { EtcdCluster } from './testing.js';

// The same contract suite the LMDB store passes (@skiff/testing), unchanged, on a real etcd of its own: the suite's
// compaction tests compact the whole keyspace.
let etcd: EtcdCluster;
beforeAll(async () => {
  etcd = await EtcdCluster.start(1);
}, 60_000);
afterAll(() => etcd?.stop());

describeStoreContract('EtcdStore', {
  open: () => openEtcdStore({ endpoints: etcd.endpoints, compactionIntervalMs: 0 }),
  // A store opened again on the same etcd: what an API server that restarted sees.
  reopen: () => openEtcdStore({ endpoints: etcd.endpoints, compactionIntervalMs: 0 }),
});
