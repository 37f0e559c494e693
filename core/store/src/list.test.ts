// What every Store must do is checked by @skiff/testing's describeStoreContract, which
// core/testing/src/store-contract/lmdb.test.ts runs on LmdbStore; the tests here are LmdbStore's own: its continue tokens, compaction edge cases and the object cache.
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError, type ListResult } from './types.js';
import { encodeContinue } from './continue-token.js';
import { TempStores, pod, podKey } from './test-support/temp-store.js';

const stores = new TempStores();
afterEach(() => stores.cleanup());

const names = (result: ListResult) => result.items.map((item) => item.object.metadata.name);

async function listError(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

describe('list', () => {
  it('still continues a compacted snapshot when nothing was written since', async () => {
    const store = await stores.open();
    for (let n = 0; n < 4; n++) await store.create(podKey(`p${n}`), pod(`p${n}`));
    const first = await store.list('/registry/pods/', { limit: 2 });
    await store.compact(store.revision());
    expect(names(await store.list('/registry/pods/', { limit: 2, continue: first.continue }))).toEqual(['p2', 'p3']);
  });

  it('rejects an empty token and forged tokens with InvalidContinue', async () => {
    const store = await stores.open();
    await store.create(podKey('a'), pod('a'));
    const bad = ['', encodeContinue({ revision: 1, afterKey: '/registry/services/x' }), encodeContinue({ revision: 99, afterKey: podKey('a') })];
    for (const token of bad) {
      const error = await listError(store.list('/registry/pods/', { continue: token }));
      expect(error.kind).toBe('InvalidContinue');
    }
  });
});

describe('list from the object cache', () => {
  it('answers unchanged objects frozen and shared, and a changed one as written', async () => {
    const store = await stores.open();
    for (const name of ['a', 'b']) await store.create(podKey(name), pod(name));
    const first = await store.list('/registry/pods/default/');
    const second = await store.list('/registry/pods/default/');
    expect(Object.isFrozen(first.items[0]!.object)).toBe(true);
    expect(second.items[0]!.object).toBe(first.items[0]!.object);
    const changed = { ...pod('a'), metadata: { ...pod('a').metadata, labels: { v: '2' } } };
    const updated = await store.update(podKey('a'), changed);
    const third = await store.list('/registry/pods/default/');
    expect(third.items[0]!.object.metadata).toMatchObject({ labels: { v: '2' }, resourceVersion: String(updated.revision) });
    expect(third.items[1]!.object).toBe(first.items[1]!.object);
    await store.delete(podKey('b'));
    expect(names(await store.list('/registry/pods/default/'))).toEqual(['a']);
  });

  it('never answers an item newer or older than the list’s revision while writes are in flight', async () => {
    const store = await stores.open();
    for (let n = 0; n < 10; n++) await store.create(podKey(`p${n}`), pod(`p${n}`));
    await store.list('/registry/pods/default/');
    const writes: Promise<unknown>[] = [];
    for (let round = 0; round < 20; round++) {
      for (let n = 0; n < 10; n++) {
        const object = { ...pod(`p${n}`), metadata: { ...pod(`p${n}`).metadata, labels: { round: String(round) } } };
        writes.push(store.update(podKey(`p${n}`), object));
      }
      const listed = await store.list('/registry/pods/default/');
      for (const item of listed.items) expect(item.revision).toBeLessThanOrEqual(listed.revision);
      // Every object the list shows is the one stored at its revision.
      for (const item of listed.items) expect(Number(item.object.metadata.resourceVersion)).toBe(item.revision);
    }
    await Promise.all(writes);
    const final = await store.list('/registry/pods/default/');
    for (const item of final.items) expect(item.object.metadata.labels).toEqual({ round: '19' });
  });
});
