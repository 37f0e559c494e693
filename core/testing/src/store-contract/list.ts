import { describe, expect, it } from 'vitest';
import type { KubeObject } from '@skiff/api';
import type { ListResult, Store, StoredObject } from '@skiff/store';
import { rejectsWith, type ContractHarness } from './harness.js';

const names = (result: ListResult) => result.items.map((item) => item.object.metadata.name);

/** Zero-padded, so key order is numeric order. */
const padded = (n: number) => `p${String(n).padStart(3, '0')}`;

async function createPods(h: ContractHarness, store: Store, count: number, extra: (n: number) => Partial<KubeObject> = () => ({})): Promise<StoredObject[]> {
  const created: StoredObject[] = [];
  for (let n = 0; n < count; n++) created.push(await store.create(h.podKey(padded(n)), h.pod(padded(n), extra(n))));
  return created;
}

export function describeList(h: ContractHarness): void {
  describe('list', () => {
    it('returns the keys under the prefix in key order, at a revision that includes every acknowledged write', async () => {
      const store = await h.open();
      const created: StoredObject[] = [];
      for (const name of ['c', 'a', 'b']) created.push(await store.create(h.podKey(name), h.pod(name)));
      await store.create(`/registry/pods/${h.namespace}-2/a`, h.pod('a'));
      await store.create(h.otherKey('services', 'a'), h.pod('a'));
      const result = await store.list(h.podPrefix());
      expect(names(result)).toEqual(['a', 'b', 'c']);
      expect(result.items.map((item) => item.key)).toEqual([h.podKey('a'), h.podKey('b'), h.podKey('c')]);
      expect(result.items).toEqual(['a', 'b', 'c'].map((name) => created.find((stored) => stored.key === h.podKey(name))));
      expect(result.revision).toBeGreaterThanOrEqual(Math.max(...created.map((stored) => stored.revision)));
      expect(result.continue).toBeUndefined();
      expect(result.remainingItemCount).toBeUndefined();
      expect((await store.list(`/registry/pods/${h.namespace}`)).items).toHaveLength(4);
      expect((await store.list(h.otherKey('configmaps', ''))).items).toEqual([]);
    });

    it('sees a write as soon as it is acknowledged', async () => {
      const store = await h.open();
      for (let n = 0; n < 10; n++) {
        const created = await store.create(h.podKey(padded(n)), h.pod(padded(n)));
        const listed = await store.list(h.podPrefix());
        expect(listed.revision).toBeGreaterThanOrEqual(created.revision);
        expect(listed.items.at(-1)).toEqual(created);
        expect(listed.items).toHaveLength(n + 1);
      }
    });

    it('answers one consistent snapshot while writes run concurrently', async () => {
      const store = await h.open();
      // Each create writes one new key, so a list at revision R holds exactly the creates at or before R.
      const written = new Map<string, number>();
      const writer = (async () => {
        for (let batch = 0; batch < 10; batch++) {
          const results = await Promise.all(
            Array.from({ length: 10 }, (_, n) => store.create(h.podKey(padded(batch * 10 + n)), h.pod(padded(batch * 10 + n)))),
          );
          for (const result of results) written.set(result.key, result.revision);
        }
      })();
      const lists: ListResult[] = [];
      let done = false;
      void writer.finally(() => (done = true));
      while (!done) {
        lists.push(await store.list(h.podPrefix()));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await writer;
      lists.push(await store.list(h.podPrefix()));
      for (const list of lists) {
        const expected = [...written].filter(([, revision]) => revision <= list.revision).map(([key]) => key);
        expect(list.items.map((item) => item.key)).toEqual(expected.sort());
        for (const item of list.items) expect(item.revision).toBe(written.get(item.key));
      }
      expect(lists.at(-1)!.items).toHaveLength(100);
    });

    it('applies the filter before the limit, and pages with a continue token', async () => {
      const store = await h.open();
      await createPods(h, store, 10, (n) => ({ spec: { even: n % 2 === 0 } }));
      const even = (object: KubeObject) => (object.spec as { even: boolean }).even;
      const first = await store.list(h.podPrefix(), { limit: 2, filter: even });
      expect(names(first)).toEqual(['p000', 'p002']);
      expect(first.continue).toEqual(expect.any(String));
      expect(first.remainingItemCount).toBeUndefined();
      const second = await store.list(h.podPrefix(), { limit: 2, filter: even, continue: first.continue });
      expect(names(second)).toEqual(['p004', 'p006']);
      expect(second.revision).toBe(first.revision);
      const third = await store.list(h.podPrefix(), { limit: 2, filter: even, continue: second.continue });
      expect(names(third)).toEqual(['p008']);
      expect(third.continue).toBeUndefined();
      const none = await store.list(h.podPrefix(), { filter: () => false });
      expect(none.items).toEqual([]);
      expect(none.continue).toBeUndefined();
    });

    it('counts the remaining items of an unfiltered page', async () => {
      const store = await h.open();
      await createPods(h, store, 5);
      const first = await store.list(h.podPrefix(), { limit: 2 });
      expect(names(first)).toEqual(['p000', 'p001']);
      expect(first.remainingItemCount).toBe(3);
      const second = await store.list(h.podPrefix(), { limit: 2, continue: first.continue });
      expect(second.remainingItemCount).toBe(1);
      const exact = await store.list(h.podPrefix(), { limit: 5 });
      expect(exact.items).toHaveLength(5);
      expect(exact.continue).toBeUndefined();
      expect(exact.remainingItemCount).toBeUndefined();
    });

    it('keeps later pages at the first page’s snapshot while writes happen between pages', async () => {
      const store = await h.open();
      await createPods(h, store, 10);
      const first = await store.list(h.podPrefix(), { limit: 4 });
      expect(names(first)).toEqual(['p000', 'p001', 'p002', 'p003']);
      const snapshot = first.revision;

      await store.update(h.podKey('p001'), h.pod('p001', { spec: { changed: true } }));
      await store.update(h.podKey('p005'), h.pod('p005', { spec: { changed: true } }));
      await store.update(h.podKey('p005'), h.pod('p005', { spec: { changed: 'twice' } }));
      await store.delete(h.podKey('p007'));
      await store.create(h.podKey('p0045'), h.pod('p0045'));
      await store.create(h.podKey('p099'), h.pod('p099'));
      await store.delete(h.podKey('p099'));
      await store.create(h.podKey('p008x'), h.pod('p008x'));
      await store.delete(h.podKey('p008x'));

      const pages: StoredObject[] = [...first.items];
      let token = first.continue;
      while (token) {
        const page = await store.list(h.podPrefix(), { limit: 4, continue: token });
        expect(page.revision).toBe(snapshot);
        pages.push(...page.items);
        token = page.continue;
      }
      expect(pages.map((item) => item.object.metadata.name)).toEqual(Array.from({ length: 10 }, (_, n) => padded(n)));
      for (const item of pages) {
        expect(item.revision).toBeLessThanOrEqual(snapshot);
        expect(item.object.metadata.resourceVersion).toBe(String(item.revision));
        expect(item.object.spec).not.toHaveProperty('changed');
      }
      const fresh = await store.list(h.podPrefix());
      expect(names(fresh)).toEqual(['p000', 'p001', 'p002', 'p003', 'p004', 'p0045', 'p005', 'p006', 'p008', 'p009']);
    });

    it('lists the state at an exact older revision, and pages from there', async () => {
      const store = await h.open();
      const created = await createPods(h, store, 4);
      const then = created.at(-1)!.revision;
      await store.delete(h.podKey('p001'));
      await store.create(h.podKey('p009'), h.pod('p009'));
      await store.update(h.podKey('p002'), h.pod('p002', { spec: { changed: true } }));
      const old = await store.list(h.podPrefix(), { revision: then });
      expect(old.revision).toBe(then);
      expect(old.items).toEqual(created);
      const page = await store.list(h.podPrefix(), { revision: then, limit: 3 });
      expect(names(page)).toEqual(['p000', 'p001', 'p002']);
      expect(page.revision).toBe(then);
      const rest = await store.list(h.podPrefix(), { continue: page.continue });
      expect(names(rest)).toEqual(['p003']);
      expect(rest.revision).toBe(then);
      const before = await store.list(h.podPrefix(), { revision: created[1]!.revision });
      expect(names(before)).toEqual(['p000', 'p001']);
    });

    it('refuses a revision newer than the store’s', async () => {
      const store = await h.open();
      await store.create(h.podKey('a'), h.pod('a'));
      await expect(store.list(h.podPrefix(), { revision: store.revision() + 1_000_000 })).rejects.toThrow();
    });

    it('rejects malformed continue tokens and tokens of another prefix with InvalidContinue', async () => {
      const store = await h.open();
      await createPods(h, store, 3);
      await store.create(h.otherKey('services', 'a'), h.pod('a'));
      await store.create(h.otherKey('services', 'b'), h.pod('b'));
      const foreign = (await store.list(h.otherKey('services', ''), { limit: 1 })).continue!;
      expect(foreign).toEqual(expect.any(String));
      for (const token of ['not base64 json', Buffer.from('{"v":1}').toString('base64'), foreign]) {
        await rejectsWith(store.list(h.podPrefix(), { continue: token }), 'InvalidContinue');
      }
    });
  });

  describe('list and compaction', () => {
    it('answers Compacted for a revision, or a page of a snapshot, that was compacted away', async () => {
      const store = await h.open();
      const created = await createPods(h, store, 6);
      const first = await store.list(h.podPrefix(), { limit: 2 });
      const then = created.at(-1)!.revision;
      await store.update(h.podKey('p004'), h.pod('p004', { spec: { changed: true } }));
      await store.compact(store.revision());
      await rejectsWith(store.list(h.podPrefix(), { limit: 2, continue: first.continue }), 'Compacted');
      await rejectsWith(store.list(h.podPrefix(), { revision: then }), 'Compacted');
      const current = await store.list(h.podPrefix());
      expect(names(current)).toEqual(Array.from({ length: 6 }, (_, n) => padded(n)));
    });
  });
}
