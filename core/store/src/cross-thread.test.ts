import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
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

/**
 * A thread that opens the store and writes: `count` new ConfigMaps named `<name>-<i>` (unless `create` is false), then
 * updates each once to `value`.
 */
function writer(path: string, announce: SharedArrayBuffer, name: string, count: number, value = 'updated', create = true): Promise<{ revisions: number[] }> {
  const worker = new Worker(
    `import { workerData, parentPort } from 'node:worker_threads';
     const { openLmdbStore } = await import(workerData.bundle);
     const store = await openLmdbStore({ path: workerData.path, compactionIntervalMs: 0, threads: { announce: workerData.announce } });
     const revisions = [];
     const key = (i) => '/registry/configmaps/t/' + workerData.name + '-' + i;
     const object = (i, value) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: workerData.name + '-' + i, namespace: 't' }, data: { value, [workerData.name]: 'x' } });
     if (workerData.create) await Promise.all(Array.from({ length: workerData.count }, async (_, i) => revisions.push((await store.create(key(i), object(i, 'created'))).revision)));
     for (let i = 0; i < workerData.count; i++) revisions.push((await store.update(key(i), object(i, workerData.value))).revision);
     await store.close();
     parentPort.postMessage({ revisions });`,
    { eval: true, execArgv: [], workerData: { bundle, path, announce, name, count, value, create } },
  );
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
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
  it('publishes every thread’s writes to a watcher in another thread, once each and in revision order', async () => {
    const path = join(dir, 'watch');
    const announce = new SharedArrayBuffer(CROSS_THREAD_BUFFER_BYTES);
    const store = await openLmdbStore({ path, compactionIntervalMs: 0, threads: { announce } });
    try {
      const start = store.revision();
      const controller = new AbortController();
      const watched = collect(store, start, 4 * 300, controller.signal);
      const [a, b] = await Promise.all([writer(path, announce, 'a', 300), writer(path, announce, 'b', 300)]);
      const events = await watched.finally(() => controller.abort());
      // Dense: the two threads' 1,200 writes took the revisions after `start` one by one, each seen once, in order.
      expect(events.map((event) => event.revision)).toEqual(Array.from({ length: 1200 }, (_, i) => start + 1 + i));
      expect(new Set([...a.revisions, ...b.revisions]).size).toBe(1200);
      // Each event is what its thread wrote at that revision.
      for (const event of events) {
        expect(event.object.metadata.resourceVersion).toBe(String(event.revision));
        expect(event.object.data?.value).toBe(event.type === 'ADDED' ? 'created' : 'updated');
        if (event.type === 'MODIFIED') expect(event.prevObject?.data?.value).toBe('created');
      }
      expect(store.revision()).toBe(start + 1200);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('reads another thread’s acknowledged write at once, and lists it, not a cached older object', async () => {
    const path = join(dir, 'reads');
    const announce = new SharedArrayBuffer(CROSS_THREAD_BUFFER_BYTES);
    const store = await openLmdbStore({ path, compactionIntervalMs: 0, threads: { announce } });
    try {
      await store.create('/registry/configmaps/t/mine', configMap('mine', 'here'));
      await writer(path, announce, 'c', 20, 'one');
      // This thread lists (and caches the decoded objects of) what the other thread wrote…
      expect((await store.list('/registry/configmaps/t/c-')).items.map((item) => item.object.data?.value)).toEqual(Array(20).fill('one'));
      // …which the other thread then changes again.
      const { revisions } = await writer(path, announce, 'c', 20, 'two', false);
      const newest = Math.max(...revisions);
      expect(store.revision()).toBe(newest);
      expect((await store.get('/registry/configmaps/t/c-19'))?.object.data?.value).toBe('two');
      const listed = await store.list('/registry/configmaps/t/');
      expect(listed.revision).toBe(newest);
      expect(listed.items.map((item) => item.object.data?.value)).toEqual([...Array(20).fill('two'), 'here']);
    } finally {
      await store.close();
    }
  }, 60_000);
});
