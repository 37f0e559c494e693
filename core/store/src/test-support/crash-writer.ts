// Run in a child process by durability.test.ts (bundled first, since Node 20 cannot run TypeScript).
//   write <path>: keeps 16 creates in flight forever and prints "acked <revision> <key>" for each
//                 acknowledged one, until it is killed.
//   idle <path>:  opens a store with periodic compaction, prints "opened", and does nothing more; the
//                 process must still exit on its own.
import { LmdbStore } from '../lmdb-store.js';

const [mode, path] = process.argv.slice(2);
if (!path || (mode !== 'write' && mode !== 'idle')) throw new Error('usage: crash-writer write|idle <path>');

if (mode === 'idle') {
  new LmdbStore({ path, compactionIntervalMs: 20 });
  process.stdout.write('opened\n');
} else {
  const store = new LmdbStore({ path, compactionIntervalMs: 0 });
  let written = 0;
  const writeNext = (): void => {
    const key = `/registry/crash/${written++}`;
    void store.create(key, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: key }, data: { n: String(written) } }).then((stored) => {
      // Writes to a pipe are synchronous on Linux: once this returns, the parent has the line.
      process.stdout.write(`acked ${stored.revision} ${key}\n`);
      writeNext();
    });
  };
  for (let inFlight = 0; inFlight < 16; inFlight++) writeNext();
}
