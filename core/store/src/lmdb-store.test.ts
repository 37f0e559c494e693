// What every Store must do is checked by @skiff/testing's describeStoreContract, which
// core/testing/src/store-contract/lmdb.test.ts runs on LmdbStore; the tests here are LmdbStore's own: absolute numbering, coded errors, key limits, batching and all-or-nothing commits.
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from './types.js';
import { type CodedStoreError, StoreUsageError } from './errors.js';
import { TempStores, pod, podKey } from './test-support/temp-store.js';

const stores = new TempStores();
afterEach(() => stores.cleanup());

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

describe('create and get', () => {
  it('assigns the next revision and sets resourceVersion', async () => {
    const store = await stores.open();
    expect(store.revision()).toBe(0);
    const first = await store.create(podKey('a'), pod('a'));
    const second = await store.create(podKey('b'), pod('b'));
    expect(first).toMatchObject({ key: podKey('a'), revision: 1, object: { metadata: { name: 'a', resourceVersion: '1' } } });
    expect(second.revision).toBe(2);
    expect(store.revision()).toBe(2);
    expect(await store.get(podKey('a'))).toEqual(first);
    expect(await store.get(podKey('missing'))).toBeUndefined();
  });

  it('refuses to create a key twice, with a coded Exists error', async () => {
    const store = await stores.open();
    await store.create(podKey('a'), pod('a'));
    const error = await rejection(store.create(podKey('a'), pod('a')));
    expect(error.kind).toBe('Exists');
    expect(error.key).toBe(podKey('a'));
    expect((error as CodedStoreError).code).toBe('SKIFF_ERR_STORE_EXISTS');
    expect(store.revision()).toBe(1);
  });

  it('keeps revisions dense when some writes of a batch fail their checks', async () => {
    const store = await stores.open();
    await store.create(podKey('taken'), pod('taken'));
    const results = await Promise.allSettled([
      store.create(podKey('x'), pod('x')),
      store.create(podKey('taken'), pod('taken')),
      store.create(podKey('y'), pod('y')),
      store.update(podKey('missing'), pod('missing')),
      store.create(podKey('z'), pod('z')),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
    const revisions = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value.revision] : []));
    expect(revisions).toEqual([2, 3, 4]);
    expect(store.revision()).toBe(4);
  });

  it('rejects keys LMDB cannot order', async () => {
    const store = await stores.open();
    await expect(store.create('', pod('a'))).rejects.toBeInstanceOf(StoreUsageError);
    await expect(store.create('/a\u0000b', pod('a'))).rejects.toThrow(/U\+0000/);
    await expect(store.get('x'.repeat(3000))).rejects.toThrow(/longer than/);
  });
});

describe('update', () => {
  it('fails with Conflict on a stale expected revision and NotFound on a missing key', async () => {
    const store = await stores.open();
    const created = await store.create(podKey('a'), pod('a'));
    await store.update(podKey('a'), created.object);
    const conflict = await rejection(store.update(podKey('a'), created.object, { expectedRevision: created.revision }));
    expect(conflict.kind).toBe('Conflict');
    expect(conflict.message).toContain('not the expected revision 1');
    expect((await rejection(store.update(podKey('b'), pod('b')))).kind).toBe('NotFound');
    expect(store.revision()).toBe(2);
  });

  it('without an expected revision, the last write wins', async () => {
    const store = await stores.open();
    await store.create(podKey('a'), pod('a'));
    const writes = await Promise.all([1, 2, 3].map((n) => store.update(podKey('a'), pod('a', 'default', { spec: { n } }))));
    expect(writes.map((write) => write.revision)).toEqual([2, 3, 4]);
    expect((await store.get(podKey('a')))?.object.spec).toEqual({ n: 3 });
  });
});

describe('guaranteedUpdate', () => {
  it('writes nothing when the result equals the current object, even if fn mutated its argument', async () => {
    const store = await stores.open();
    await store.create(podKey('a'), pod('a'));
    const same = await store.guaranteedUpdate(podKey('a'), (current) => structuredClone(current!.object));
    expect(same?.revision).toBe(1);
    const changedInPlace = await store.guaranteedUpdate(podKey('a'), (current) => {
      current!.object.status = { phase: 'Pending' };
      return current!.object;
    });
    expect(changedInPlace).toMatchObject({ revision: 2, object: { status: { phase: 'Pending' } } });
    expect(store.revision()).toBe(2);
  });
});

describe('lifecycle', () => {
  it('continues numbering revisions after a reopen', async () => {
    const path = await stores.dir();
    const first = await stores.open({ path });
    await first.create(podKey('a'), pod('a'));
    await first.create(podKey('b'), pod('b'));
    await first.delete(podKey('a'));
    await first.close();

    const reopened = await stores.open({ path });
    expect(reopened.revision()).toBe(3);
    expect(await reopened.get(podKey('a'))).toBeUndefined();
    expect((await reopened.get(podKey('b')))?.revision).toBe(2);
    expect((await reopened.create(podKey('c'), pod('c'))).revision).toBe(4);
  });
});

describe('all-or-nothing writes', () => {
  function nested(levels: number): Record<string, unknown> {
    return JSON.parse('{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1));
  }

  async function eventsAfter(store: Awaited<ReturnType<TempStores['open']>>, after: number) {
    const events: { revision: number; key: string }[] = [];
    if (store.revision() === after) return events;
    for await (const event of store.watch('/registry/', after, new AbortController().signal)) {
      events.push({ revision: event.revision, key: event.key });
      if (event.revision === store.revision()) break;
    }
    return events;
  }

  it('refuses an object too deep to encode before writing anything, and uses no revision for it', async () => {
    const store = await stores.open();
    await store.create(podKey('a'), pod('a'));
    const deep = pod('deep', 'default', { spec: nested(2_000) });
    const error = await store.create(podKey('deep'), deep).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(StoreUsageError);
    expect((error as Error).message).toContain('nests deeper than 512 levels');
    await expect(store.update(podKey('a'), { ...pod('a'), spec: nested(2_000) })).rejects.toBeInstanceOf(StoreUsageError);
    expect(await store.get(podKey('deep'))).toBeUndefined();
    expect((await store.get(podKey('a')))?.revision).toBe(1);
    expect((await store.create(podKey('b'), pod('b'))).revision).toBe(2);
    expect(await eventsAfter(store, 0)).toEqual([
      { revision: 1, key: podKey('a') },
      { revision: 2, key: podKey('b') },
    ]);
  });

  it('leaves no object, no event and no used revision when a put fails inside a shared batch', async () => {
    const store = await stores.open();
    // Fault injection into the real database: the object put fails after the event was written.
    const objects = (store as unknown as { dbs: { objects: { put: (key: string | symbol, value: unknown) => unknown } } }).dbs.objects;
    const put = objects.put.bind(objects);
    objects.put = (key, value) => {
      if (key === podKey('poison')) throw new Error('injected put failure');
      return put(key, value);
    };
    const results = await Promise.allSettled(['a', 'b', 'poison', 'c', 'd'].map((name) => store.create(podKey(name), pod(name))));
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    const revisions = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value.revision] : []));
    expect(revisions).toEqual([1, 2, 3, 4]);
    expect(store.revision()).toBe(4);
    expect(await store.get(podKey('poison'))).toBeUndefined();
    expect((await eventsAfter(store, 0)).map((event) => event.key)).toEqual([podKey('a'), podKey('b'), podKey('c'), podKey('d')]);
    // An update that fails the same way keeps the object as it was.
    objects.put = (key, value) => {
      if (key === podKey('a')) throw new Error('injected put failure');
      return put(key, value);
    };
    await expect(store.update(podKey('a'), { ...pod('a'), metadata: { name: 'a', labels: { changed: 'yes' } } })).rejects.toThrow('injected put failure');
    expect((await store.get(podKey('a')))?.object.metadata).toMatchObject({ labels: { app: 'web' }, resourceVersion: '1' });
    expect(await eventsAfter(store, 4)).toEqual([]);
  });
});
