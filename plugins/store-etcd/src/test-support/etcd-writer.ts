// Run in a child process by crash.test.ts (bundled first, since Node 20 cannot run TypeScript): an API server's
// store that writes through an EtcdStore until its process is killed.
import { writeUntilKilled } from '@skiff/testing/store-durability';
import { openEtcdStore } from '../etcd-store.js';

const [endpoints, keyPrefix, prefix] = process.argv.slice(2);
if (!endpoints || !keyPrefix || !prefix) throw new Error('usage: etcd-writer <endpoint,…> <keyPrefix> <prefix>');
const store = await openEtcdStore({ endpoints: endpoints.split(','), keyPrefix, compactionIntervalMs: 0 });
writeUntilKilled(store, { prefix });
