import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '@skiff/api';
import { StoreError, type ListResult, type StoredObject } from './types.js';
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
  it('returns the keys under the prefix in key order, at the current revision', async () => {
    const store = await stores.open();
    for (const name of ['c', 'a', 'b']) await store.create(podKey(name), pod(name));
    await store.create(podKey('a', 'default-2'), pod('a', 'default-2'));
    await store.create('/registry/services/default/a', pod('a'));
    const result = await store.list('/registry/pods/default/');
    expect(names(result)).toEqual(['a', 'b', 'c']);
    expect(result.revision).toBe(5);
    expect(result.continue).toBeUndefined();
    expect(result.items[0]).toMatchObject({ key: podKey('a'), revision: 2 });
    expect((await store.list('/registry/pods/')).items).toHaveLength(4);
    expect((await store.list('')).items).toHaveLength(5);
  });

  it('sees a write as soon as it is acknowledged', async () => {
    const store = await stores.open();
    for (let n = 0; n < 20; n++) {
      const created = await store.create(podKey(`p${n}`), pod(`p${n}`));
      const listed = await store.list('/registry/pods/');
      expect(listed.revision).toBe(created.revision);
      expect(listed.items).toHaveLength(n + 1);
    }
  });

  it('returns a revision that matches its items while writes run concurrently', async () => {
    const store = await stores.open();
    // Each create is one revision and one new key, so a list at revision R holds exactly R items.
    // The writer commits in batches of 10 so lists land between batches.
    const writer = (async () => {
      for (let batch = 0; batch < 20; batch++) {
        await Promise.all(Array.from({ length: 10 }, (_, n) => store.create(podKey(`p${batch}-${n}`), pod(`p${batch}-${n}`))));
      }
    })();
    const lists: ListResult[] = [];
    let written = false;
    void writer.finally(() => (written = true));
    while (!written) {
      lists.push(await store.list('/registry/pods/'));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await writer;
    lists.push(await store.list('/registry/pods/'));
    expect(lists.some((list) => list.revision > 0 && list.revision < 200)).toBe(true);
    for (const list of lists) {
      expect(list.items).toHaveLength(list.revision);
      expect(Math.max(0, ...list.items.map((item) => item.revision))).toBe(list.revision);
    }
    expect(lists.at(-1)!.revision).toBe(200);
  });

  it('applies the filter before the limit, and pages with a continue token', async () => {
    const store = await stores.open();
    for (let n = 0; n < 10; n++) await store.create(podKey(`p${n}`), pod(`p${n}`, 'default', { spec: { even: n % 2 === 0 } }));
    const even = (object: KubeObject) => (object.spec as { even: boolean }).even;
    const first = await store.list('/registry/pods/', { limit: 2, filter: even });
    expect(names(first)).toEqual(['p0', 'p2']);
    expect(first.continue).toBeDefined();
    expect(first.remainingItemCount).toBeUndefined();
    const second = await store.list('/registry/pods/', { limit: 2, filter: even, continue: first.continue });
    expect(names(second)).toEqual(['p4', 'p6']);
    const third = await store.list('/registry/pods/', { limit: 2, filter: even, continue: second.continue });
    expect(names(third)).toEqual(['p8']);
    expect(third.continue).toBeUndefined();
  });

  it('counts the remaining items of an unfiltered page', async () => {
    const store = await stores.open();
    for (let n = 0; n < 5; n++) await store.create(podKey(`p${n}`), pod(`p${n}`));
    const first = await store.list('/registry/pods/', { limit: 2 });
    expect(first.remainingItemCount).toBe(3);
    const exact = await store.list('/registry/pods/', { limit: 5 });
    expect(exact.continue).toBeUndefined();
    expect(exact.remainingItemCount).toBeUndefined();
  });

  it('keeps later pages at the first page snapshot while writes happen between pages', async () => {
    const store = await stores.open();
    for (let n = 0; n < 10; n++) await store.create(podKey(`p${n}`), pod(`p${n}`));
    const first = await store.list('/registry/pods/', { limit: 4 });
    expect(names(first)).toEqual(['p0', 'p1', 'p2', 'p3']);
    const snapshot = first.revision;

    await store.update(podKey('p1'), pod('p1', 'default', { spec: { changed: true } }));
    await store.update(podKey('p5'), pod('p5', 'default', { spec: { changed: true } }));
    await store.update(podKey('p5'), pod('p5', 'default', { spec: { changed: 'twice' } }));
    await store.delete(podKey('p7'));
    await store.create(podKey('p45'), pod('p45'));
    await store.create(podKey('p99'), pod('p99'));
    await store.delete(podKey('p99'));
    await store.create(podKey('p8x'), pod('p8x'));
    await store.delete(podKey('p8x'));

    const pages: StoredObject[] = [...first.items];
    let token = first.continue;
    while (token) {
      const page = await store.list('/registry/pods/', { limit: 4, continue: token });
      expect(page.revision).toBe(snapshot);
      pages.push(...page.items);
      token = page.continue;
    }
    expect(pages.map((item) => item.object.metadata.name)).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9']);
    for (const item of pages) {
      expect(item.revision).toBeLessThanOrEqual(snapshot);
      expect(item.object.spec).not.toHaveProperty('changed');
    }
    const fresh = await store.list('/registry/pods/');
    expect(names(fresh)).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p45', 'p5', 'p6', 'p8', 'p9']);
  });

  it('answers Compacted when a page continues a snapshot that was compacted away', async () => {
    const store = await stores.open();
    for (let n = 0; n < 6; n++) await store.create(podKey(`p${n}`), pod(`p${n}`));
    const first = await store.list('/registry/pods/', { limit: 2 });
    await store.update(podKey('p4'), pod('p4'));
    await store.compact(store.revision());
    const error = await listError(store.list('/registry/pods/', { limit: 2, continue: first.continue }));
    expect(error.kind).toBe('Compacted');
  });

  it('still continues a compacted snapshot when nothing was written since', async () => {
    const store = await stores.open();
    for (let n = 0; n < 4; n++) await store.create(podKey(`p${n}`), pod(`p${n}`));
    const first = await store.list('/registry/pods/', { limit: 2 });
    await store.compact(store.revision());
    expect(names(await store.list('/registry/pods/', { limit: 2, continue: first.continue }))).toEqual(['p2', 'p3']);
  });

  it('lists the state at an older revision, pages from there, and answers Compacted once it is gone', async () => {
    const store = await stores.open();
    for (let n = 0; n < 4; n++) await store.create(podKey(`p${n}`), pod(`p${n}`));
    const then = store.revision();
    await store.delete(podKey('p1'));
    await store.create(podKey('p9'), pod('p9'));
    await store.update(podKey('p2'), { ...pod('p2'), spec: { changed: true } });
    const old = await store.list('/registry/pods/', { revision: then });
    expect(old.revision).toBe(then);
    expect(names(old)).toEqual(['p0', 'p1', 'p2', 'p3']);
    expect(old.items.find((item) => item.key === podKey('p2'))?.object.spec).not.toHaveProperty('changed');
    const page = await store.list('/registry/pods/', { revision: then, limit: 3 });
    expect(names(page)).toEqual(['p0', 'p1', 'p2']);
    expect(names(await store.list('/registry/pods/', { continue: page.continue }))).toEqual(['p3']);
    await expect(store.list('/registry/pods/', { revision: store.revision() + 1 })).rejects.toThrow('newer than the store');
    await store.compact(then + 1);
    expect((await listError(store.list('/registry/pods/', { revision: then }))).kind).toBe('Compacted');
  });

  it('rejects malformed and foreign continue tokens with InvalidContinue', async () => {
    const store = await stores.open();
    await store.create(podKey('a'), pod('a'));
    const bad = [
      '',
      'not base64 json',
      Buffer.from('{"v":1}').toString('base64'),
      encodeContinue({ revision: 1, afterKey: '/registry/services/x' }),
      encodeContinue({ revision: 99, afterKey: podKey('a') }),
    ];
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
