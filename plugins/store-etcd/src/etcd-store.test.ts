import { randomBytes } from 'node:crypto';
import type { KubeObject } from '@skiff/api';
import { StoreError, type StoreEvent } from '@skiff/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEtcdStore, type EtcdStore } from './etcd-store.js';
import { EtcdCluster } from './testing.js';

let etcd: EtcdCluster;
const stores: EtcdStore[] = [];

beforeAll(async () => {
  etcd = await EtcdCluster.start(1);
}, 60_000);

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await etcd?.stop();
});

async function open(options: Partial<Parameters<typeof openEtcdStore>[0]> = {}): Promise<EtcdStore> {
  const store = await openEtcdStore({ endpoints: etcd.endpoints, compactionIntervalMs: 0, ...options });
  stores.push(store);
  return store;
}

function space(): string {
  return `ns-${randomBytes(4).toString('hex')}`;
}

function pod(name: string, namespace: string, labels: Record<string, string> = { app: 'web' }): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
}

async function failure(promise: Promise<unknown>): Promise<StoreError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StoreError);
  return err as StoreError;
}

async function take(iterable: AsyncIterable<StoreEvent>, count: number): Promise<StoreEvent[]> {
  const events: StoreEvent[] = [];
  if (count === 0) return events;
  for await (const event of iterable) {
    events.push(event);
    if (events.length === count) break;
  }
  return events;
}

describe('the etcd store', () => {
  it('writes at etcd revisions: the resourceVersion is the mod revision, with the contract errors', async () => {
    const store = await open();
    const ns = space();
    const key = `/registry/pods/${ns}/a`;
    const before = store.revision();
    const created = await store.create(key, pod('a', ns));
    expect(created.revision).toBeGreaterThan(before);
    expect(created.object.metadata.resourceVersion).toBe(String(created.revision));
    expect(store.revision()).toBeGreaterThanOrEqual(created.revision);
    expect(await store.get(key)).toEqual(created);
    expect((await failure(store.create(key, pod('a', ns)))).kind).toBe('Exists');
    expect((await failure(store.update(key, pod('a', ns), { expectedRevision: created.revision - 1 }))).kind).toBe('Conflict');
    expect((await failure(store.update(`/registry/pods/${ns}/missing`, pod('missing', ns)))).kind).toBe('NotFound');
    const updated = await store.update(key, { ...pod('a', ns), spec: { containers: [] } }, { expectedRevision: created.revision });
    expect(updated.revision).toBeGreaterThan(created.revision);
    const deleted = await store.delete(key, { expectedRevision: updated.revision });
    expect(deleted.revision).toBeGreaterThan(updated.revision);
    expect(deleted.object.spec).toEqual({ containers: [] });
    expect(deleted.object.metadata.resourceVersion).toBe(String(deleted.revision));
    expect(await store.get(key)).toBeUndefined();
    expect((await failure(store.delete(key))).kind).toBe('NotFound');
  });

  it('loses no update when guaranteedUpdate callers race, across two stores', async () => {
    const [a, b] = [await open(), await open()];
    const ns = space();
    const key = `/registry/configmaps/${ns}/counter`;
    await a.create(key, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'counter', namespace: ns }, data: { n: '0' } });
    const bump = (store: EtcdStore) =>
      store.guaranteedUpdate(key, (current) => {
        const object = structuredClone(current!.object) as KubeObject & { data: { n: string } };
        object.data.n = String(Number(object.data.n) + 1);
        return object;
      });
    await Promise.all(Array.from({ length: 20 }, (_, i) => bump(i % 2 ? a : b)));
    expect(((await a.get(key))!.object as KubeObject & { data: { n: string } }).data.n).toBe('20');
  });

  it('pages a list at one revision while writes go on, and lists at an exact revision', async () => {
    const store = await open();
    const ns = space();
    for (let i = 0; i < 5; i++) await store.create(`/registry/pods/${ns}/p${i}`, pod(`p${i}`, ns));
    const first = await store.list(`/registry/pods/${ns}/`, { limit: 2 });
    expect(first.items.map((item) => item.object.metadata.name)).toEqual(['p0', 'p1']);
    expect(first.remainingItemCount).toBe(3);
    await store.create(`/registry/pods/${ns}/p5`, pod('p5', ns));
    await store.delete(`/registry/pods/${ns}/p3`);
    const second = await store.list(`/registry/pods/${ns}/`, { limit: 10, continue: first.continue });
    expect(second.revision).toBe(first.revision);
    expect(second.items.map((item) => item.object.metadata.name)).toEqual(['p2', 'p3', 'p4']);
    expect(second.continue).toBeUndefined();
    const now = await store.list(`/registry/pods/${ns}/`);
    expect(now.items.map((item) => item.object.metadata.name)).toEqual(['p0', 'p1', 'p2', 'p4', 'p5']);
    const then = await store.list(`/registry/pods/${ns}/`, { revision: first.revision });
    expect(then.items).toHaveLength(5);
    const filtered = await store.list(`/registry/pods/${ns}/`, { limit: 1, filter: (object) => object.metadata.name === 'p4' });
    expect(filtered.items.map((item) => item.object.metadata.name)).toEqual(['p4']);
    expect((await failure(store.list(`/registry/pods/${ns}/`, { continue: 'garbage' }))).kind).toBe('InvalidContinue');
  });

  it('shows a write through one store to a watch on another, in order, with previous objects', async () => {
    const [writer, reader] = [await open(), await open()];
    const ns = space();
    const prefix = `/registry/pods/${ns}/`;
    const from = writer.revision();
    const watched = take(reader.watch(prefix, from, new AbortController().signal), 4);
    const other = `/registry/secrets/${ns}/s`;
    await writer.create(other, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: ns } });
    const a = await writer.create(`${prefix}a`, pod('a', ns));
    const b = await writer.create(`${prefix}b`, pod('b', ns));
    const a2 = await writer.update(`${prefix}a`, pod('a', ns, { app: 'db' }));
    const gone = await writer.delete(`${prefix}b`);
    const events = await watched;
    expect(events.map((e) => [e.type, e.key, e.revision])).toEqual([
      ['ADDED', `${prefix}a`, a.revision],
      ['ADDED', `${prefix}b`, b.revision],
      ['MODIFIED', `${prefix}a`, a2.revision],
      ['DELETED', `${prefix}b`, gone.revision],
    ]);
    expect(events[2]!.prevObject?.metadata.labels).toEqual({ app: 'web' });
    expect(events[3]!.prevObject?.metadata.resourceVersion).toBe(String(b.revision));
    expect(events[3]!.object.metadata.resourceVersion).toBe(String(gone.revision));
    expect(reader.revision()).toBeGreaterThanOrEqual(gone.revision);
    // A watch that starts later from the same revision replays the same events (the hub's memory).
    expect((await take(reader.watch(prefix, from, new AbortController().signal), 4)).map((e) => e.revision)).toEqual(events.map((e) => e.revision));
  });

  it('serves a watch from before its memory from etcd, and answers Compacted once etcd compacted', async () => {
    const store = await open({ watchCacheSize: 2 });
    const ns = space();
    const prefix = `/registry/pods/${ns}/`;
    const from = store.revision();
    const written = [];
    for (let i = 0; i < 6; i++) written.push(await store.create(`${prefix}p${i}`, pod(`p${i}`, ns)));
    const replay = await take(store.watch(prefix, from, new AbortController().signal), 6);
    expect(replay.map((e) => e.revision)).toEqual(written.map((w) => w.revision));
    await store.compact(written[3]!.revision);
    expect(store.compactedRevision()).toBeGreaterThanOrEqual(written[3]!.revision);
    expect((await failure((async () => take(store.watch(prefix, from, new AbortController().signal), 1))())).kind).toBe('Compacted');
    expect((await failure(store.list(prefix, { revision: written[1]!.revision }))).kind).toBe('Compacted');
    // Another store on the same etcd learns of the compaction from etcd itself.
    const other = await open({ watchCacheSize: 1 });
    await other.create(`${prefix}later`, pod('later', ns));
    await other.create(`${prefix}later2`, pod('later2', ns));
    expect((await failure((async () => take(other.watch(prefix, written[0]!.revision, new AbortController().signal), 1))())).kind).toBe('Compacted');
  });

  it('follows the revision of writes outside its own keys (another cluster on the same etcd) through progress requests', async () => {
    const [mine, theirs] = [await open({ keyPrefix: '/cluster-a' }), await open({ keyPrefix: '/cluster-b' })];
    const ns = space();
    const written = await theirs.create(`/registry/pods/${ns}/a`, pod('a', ns));
    const deadline = Date.now() + 5000;
    while (mine.revision() < written.revision && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(mine.revision()).toBeGreaterThanOrEqual(written.revision);
    // Neither sees the other's keys.
    expect(await mine.get(`/registry/pods/${ns}/a`)).toBeUndefined();
  });

  it('fails later calls with Closed, and ends its watches', async () => {
    const store = await open();
    const ns = space();
    const watching = take(store.watch(`/registry/pods/${ns}/`, store.revision(), new AbortController().signal), 1);
    await store.close();
    expect((await failure(watching)).kind).toBe('Closed');
    expect((await failure(store.get(`/registry/pods/${ns}/a`))).kind).toBe('Closed');
  });
});
