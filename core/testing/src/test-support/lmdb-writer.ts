// Run in a child process by store-durability/lmdb.test.ts (bundled first, since Node 20 cannot run TypeScript):
// writes through an LmdbStore at <path> until it is killed.
import { LmdbStore } from '@skiff/store';
import { writeUntilKilled } from '../store-durability/index.js';

const [path, prefix] = process.argv.slice(2);
if (!path || !prefix) throw new Error('usage: lmdb-writer <path> <prefix>');
writeUntilKilled(new LmdbStore({ path, compactionIntervalMs: 0 }), { prefix });
