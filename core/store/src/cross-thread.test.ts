import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker } from 'node:worker_threads';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '@skiff/api';
import { openLmdbStore, type LmdbStore } from './lmdb-store.js';
import { CROSS_THREAD_BUFFER_BYTES } from './options.js';
import type { StoreEvent } from './types.js';

// Real threads over one LMDB environment, as the API server runs on every core. The worker threads run the source of
// this package and of the @skiff packages it imports, bundled; other packages stay imports, found from the package's
// node_modules cache folder.
let dir: string;
const bundleDir = fileURLToPath(new URL(`../node_modules/.cache/cross-thread-${process.pid}/`, import.meta.url));
const bundle = join(bundleDir, 'store.mjs');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'skiff-cross-thread-'));
  await build({
    entryPoints: [fileURLToPath(new URL('./lmdb-store.ts', import.meta.url))],
    bundle: true,
    conditions: ['source'],
    plugins: [
      { name: 'external', setup: (b) => b.onResolve({ filter: /^[^./]/ }, ({ path }) => (path.startsWith('@skiff/') ? undefined : { external: true })) },
    ],
    platform: 'node',
    format: 'esm',
    outfile: bundle,
    logLevel: 'silent',
  });
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(bundleDir, { recursive: true, force: true });
});

const configMap = (name: string, value: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 't' }, data: { value } });
const data = (object: KubeObject | undefined): Record<string, string> | undefined => (object as { data?: Record<string, string> } | undefined)?.data;

/**
 * Runs `body` in a worker thread that has opened the store at `path` as an API server worker does, its writes made by
 * `primary` (LmdbStore.serveThread); `body` sees `store` and `workerData`, and its result is what the thread posts.
 */
function onWorkerThread<T>(primary: LmdbStore, path: string, announce: SharedArrayBuffer, data: Record<string, unknown>, body: string): Promise<T> {
  const channel = new MessageChannel();
  primary.serveThread(channel.port1);
  const worker = new Worker(
    `import { workerData, parentPort } from 'node:worker_threads';
     const { openLmdbStore } = await import(workerData.bundle);
     const store = await openLmdbStore({ path: workerData.path, compactionIntervalMs: 0, threads: { announce: workerData.announce, primary: workerData.port } });
     const result = await (async () => { ${body} })();
     await store.close();
     parentPort.postMessage(result);`,
    { eval: true, execArgv: [], workerData: { ...data, bundle, path, announce, port: channel.port2 }, transferList: [channel.port2] },
  );
  return new Promise<T>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  }).finally(() => channel.port1.close());
}

/** A worker thread that writes `count` new ConfigMaps named `<name>-<i>` (unless `create` is false), then updates each once to `value`. */
function writer(
  path: string,
  announce: SharedArrayBuffer,
  name: string,
  count: number,
  value = 'updated',
  create = true,
  primary: LmdbStore,
): Promise<{ revisions: number[] }> {
  return onWorkerThread(
    primary,
    path,
    announce,
    { name, count, value, create },
    `const revisions = [];
     const key = (i) => '/registry/configmaps/t/' + workerData.name + '-' + i;
     const object = (i, value) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: workerData.name + '-' + i, namespace: 't' }, data: { value, [workerData.name]: 'x' } });
     if (workerData.create) await Promise.all(Array.from({ length: workerData.count }, async (_, i) => revisions.push((await store.create(key(i), object(i, 'created'))).revision)));
     for (let i = 0; i < workerData.count; i++) revisions.push((await store.update(key(i), object(i, workerData.value))).revision);
     return { revisions };`,
  );
}

/** A worker thread that adds 1 to the counter in `key`, `times` times, each a guaranteedUpdate. */
function incrementer(path: string, announce: SharedArrayBuffer, key: string, times: number, primary: LmdbStore): Promise<{ calls: number }> {
  return onWorkerThread(
    primary,
    path,
    announce,
    { key, times },
    `let calls = 0;
     await Promise.all(Array.from({ length: workerData.times }, () => store.guaranteedUpdate(workerData.key, (current) => {
       calls++;
       const object = current.object;
       object.data.count = String(Number(object.data.count) + 1);
       return object;
     })));
     return { calls };`,
  );
}

async function collect(store: LmdbStore, fromRevision: number, count: number, signal: AbortSignal): Promise<StoreEvent[]> {
  const events: StoreEvent[] = [];
  for await (const event of store.watch('/registry/configmaps/', fromRevision, signal)) {
    events.push(event);
    if (events.length === count) break;
  }
  return events;
}

describe('one LMDB store opened by several threads', () => {
  it('makes worker threads’ writes in the primary thread’s transactions: dense revisions, every event once, in order', async () => {
    const path = join(dir, 'relayed');
    const announce = new SharedArrayBuffer(CROSS_THREAD_BUFFER_BYTES);
    const store = await openLmdbStore({ path, compactionIntervalMs: 0, threads: { announce } });
    try {
      // A worker thread's store in this thread, watching beside the primary's: both see the same events.
      const channel = new MessageChannel();
      store.serveThread(channel.port1);
      const relaying = await openLmdbStore({ path, compactionIntervalMs: 0, threads: { announce, primary: channel.port2 } });
      const start = store.revision();
      const controller = new AbortController();
      const watched = collect(store, start, 4 * 200 + 2 * 50, controller.signal);
      const watchedOnWorker = collect(relaying, start, 4 * 200 + 2 * 50, controller.signal);
      // Two relaying threads and the primary itself write at once.
      const own = Promise.all(Array.from({ length: 100 }, (_, i) => store.create(`/registry/configmaps/t/own-${i}`, configMap(`own-${i}`, 'created'))));
      const [a, b] = await Promise.all([
        writer(path, announce, 'a', 200, 'updated', true, store),
        writer(path, announce, 'b', 200, 'updated', true, store),
        own,
      ]);
      const [events, eventsOnWorker] = await Promise.all([watched, watchedOnWorker]).finally(() => controller.abort());
      expect(events.map((event) => event.revision)).toEqual(Array.from({ length: 900 }, (_, i) => start + 1 + i));
      expect(eventsOnWorker).toEqual(events);
      expect(new Set([...a.revisions, ...b.revisions]).size).toBe(800);
      for (const event of events) expect(event.object.metadata.resourceVersion).toBe(String(event.revision));
      // A relayed write's errors are the store's own: a create of an existing key is Exists.
      await expect(relaying.create('/registry/configmaps/t/own-0', configMap('own-0', 'again'))).rejects.toMatchObject({
        kind: 'Exists',
        code: 'SKIFF_ERR_STORE_EXISTS',
      });
      await expect(relaying.update('/registry/configmaps/t/own-1', configMap('own-1', 'x'), { expectedRevision: 1 })).rejects.toMatchObject({
        kind: 'Conflict',
      });
      await relaying.close();
      channel.port1.close();
    } finally {
      await store.close();
    }
  }, 60_000);

  it('runs guaranteedUpdate from several threads at once without losing an update', async () => {
    const path = join(dir, 'counter');
    const announce = new SharedArrayBuffer(CROSS_THREAD_BUFFER_BYTES);
    const store = await openLmdbStore({ path, compactionIntervalMs: 0, threads: { announce } });
    try {
      const key = '/registry/configmaps/t/counter';
      await store.create(key, { ...configMap('counter', 'x'), data: { count: '0' } } as KubeObject);
      const [a, b] = await Promise.all([incrementer(path, announce, key, 100, store), incrementer(path, announce, key, 100, store)]);
      expect(data((await store.get(key))?.object)?.count).toBe('200');
      // Conflicts made some functions run again: at least once per update.
      expect(a.calls + b.calls).toBeGreaterThanOrEqual(200);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('reads another thread’s acknowledged write at once, and lists it, not a cached older object', async () => {
    const path = join(dir, 'reads');
    const announce = new SharedArrayBuffer(CROSS_THREAD_BUFFER_BYTES);
    const store = await openLmdbStore({ path, compactionIntervalMs: 0, threads: { announce } });
    const channel = new MessageChannel();
    store.serveThread(channel.port1);
    // Reads on a worker thread's store (in this thread), writes made by the primary for other threads.
    const reader = await openLmdbStore({ path, compactionIntervalMs: 0, threads: { announce, primary: channel.port2 } });
    try {
      await reader.create('/registry/configmaps/t/mine', configMap('mine', 'here'));
      await writer(path, announce, 'c', 20, 'one', true, store);
      // This thread lists (and caches the decoded objects of) what the other thread wrote…
      expect((await reader.list('/registry/configmaps/t/c-')).items.map((item) => data(item.object)?.value)).toEqual(Array(20).fill('one'));
      // …which the other thread then changes again.
      const { revisions } = await writer(path, announce, 'c', 20, 'two', false, store);
      const newest = Math.max(...revisions);
      expect(reader.revision()).toBe(newest);
      expect(data((await reader.get('/registry/configmaps/t/c-19'))?.object)?.value).toBe('two');
      const listed = await reader.list('/registry/configmaps/t/');
      expect(listed.revision).toBe(newest);
      expect(listed.items.map((item) => data(item.object)?.value)).toEqual([...Array(20).fill('two'), 'here']);
    } finally {
      await reader.close();
      channel.port1.close();
      await store.close();
    }
  }, 60_000);
});
