// Run in a child process by durability.test.ts (bundled first, since Node 20 cannot run TypeScript).
// (That acknowledged writes survive a SIGKILL is checked for every store by @skiff/testing's
// checkAcknowledgedWritesSurvive; these modes test what is LMDB's own.)
//   mixed <path>: keeps 16 creates in flight forever and prints "acked <revision> <key>" for each
//                 acknowledged one, until it is killed. Every fifth write fails inside the shared write
//                 transaction — a create of a key that exists, or a put that fails after the event was
//                 written (a fault injected into the real LMDB database) — and prints "failed <key>" for
//                 those. A watch from 0 runs alongside and prints "seen <revision> <key>" for each event
//                 it delivers.
//   idle <path>:  opens a store with periodic compaction, prints "opened", and does nothing more; the
//                 process must still exit on its own.
import { LmdbStore } from '../lmdb-store.js';

const [mode, path] = process.argv.slice(2);
if (!path || (mode !== 'mixed' && mode !== 'idle')) throw new Error('usage: crash-writer mixed|idle <path>');

/** Writes to a pipe are synchronous on Linux: once this returns, the parent has the line. */
const say = (line: string) => process.stdout.write(`${line}\n`);

if (mode === 'idle') {
  new LmdbStore({ path, compactionIntervalMs: 20 });
  say('opened');
} else {
  const store = new LmdbStore({ path, compactionIntervalMs: 0 });
  // Fault injection: the objects database refuses keys under /poison/, as a full disk or an
  // unencodable value would, after the store has already written the event for that change.
  // (lmdb-js also puts its shared msgpack structures here, under a symbol key.)
  const objects = (store as unknown as { dbs: { objects: { put: (key: string | symbol, value: unknown) => unknown } } }).dbs.objects;
  const put = objects.put.bind(objects);
  objects.put = (key, value) => {
    if (typeof key === 'string' && key.startsWith('/registry/crash/poison/')) throw new Error('injected put failure');
    return put(key, value);
  };
  void (async () => {
    for await (const event of store.watch('/registry/crash/', 0, new AbortController().signal)) say(`seen ${event.revision} ${event.key}`);
  })();
  let written = 0;
  const writeNext = (): void => {
    const n = written++;
    const failing = n % 5 === 4;
    const key = failing ? (n % 10 === 4 ? '/registry/crash/0' : `/registry/crash/poison/${n}`) : `/registry/crash/${n}`;
    store.create(key, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: String(n) }, data: { n: String(n) } }).then(
      (stored) => {
        say(`acked ${stored.revision} ${key}`);
        writeNext();
      },
      () => {
        say(`failed ${key}`);
        writeNext();
      },
    );
  };
  for (let inFlight = 0; inFlight < 16; inFlight++) writeNext();
}
