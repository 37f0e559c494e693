import { describe, expect, it } from 'vitest';
import type { StoredObject } from '@skiff/store';
import { rejectsWith, type ContractHarness } from './harness.js';

/** resourceVersion is the revision of the object's last write, as a decimal string. */
function expectConsistent(stored: StoredObject, key: string): void {
  expect(stored.key).toBe(key);
  expect(stored.object.metadata.resourceVersion).toBe(String(stored.revision));
}

/** Whether the object can be changed by its holder (a frozen one is shared on purpose and cannot). */
const mutable = (stored: StoredObject) => !Object.isFrozen(stored.object) && !Object.isFrozen(stored.object.metadata);

export function describeWrites(h: ContractHarness): void {
  describe('create and get', () => {
    it('gives each write a revision after the last one and sets resourceVersion to it', async () => {
      const store = await h.open();
      const before = store.revision();
      const first = await store.create(h.podKey('a'), h.pod('a'));
      const second = await store.create(h.podKey('b'), h.pod('b'));
      expectConsistent(first, h.podKey('a'));
      expectConsistent(second, h.podKey('b'));
      expect(first.revision).toBeGreaterThan(before);
      expect(second.revision).toBeGreaterThan(first.revision);
      expect(store.revision()).toBeGreaterThanOrEqual(second.revision);
      expect(first.object.metadata).toMatchObject({ name: 'a', namespace: h.namespace });
      expect(await store.get(h.podKey('a'))).toEqual(first);
      expect(await store.get(h.podKey('missing'))).toBeUndefined();
    });

    it('refuses to create a key twice with Exists, leaving the first object', async () => {
      const store = await h.open();
      const first = await store.create(h.podKey('a'), h.pod('a'));
      await rejectsWith(store.create(h.podKey('a'), h.pod('a', { spec: { second: true } })), 'Exists');
      expect(await store.get(h.podKey('a'))).toEqual(first);
    });

    it('never shares objects with callers', async () => {
      const store = await h.open();
      const input = h.pod('a');
      const created = await store.create(h.podKey('a'), input);
      expect(input.metadata.resourceVersion).toBeUndefined();
      input.metadata.labels = { changed: 'input' };
      if (mutable(created)) created.object.metadata.labels = { changed: 'result' };
      const read = await store.get(h.podKey('a'));
      expect(read?.object.metadata.labels).toEqual({ app: 'web' });
      if (mutable(read!)) read!.object.metadata.labels = { changed: 'read' };
      expect((await store.get(h.podKey('a')))?.object.metadata.labels).toEqual({ app: 'web' });
      const update = h.pod('a', { spec: { v: 2 } });
      const updated = await store.update(h.podKey('a'), update);
      expect(update.metadata.resourceVersion).toBeUndefined();
      (update.spec as { v: number }).v = 3;
      if (mutable(updated)) (updated.object.spec as { v: number }).v = 4;
      expect((await store.get(h.podKey('a')))?.object.spec).toEqual({ v: 2 });
    });
  });

  describe('update', () => {
    it('replaces the object at a later revision', async () => {
      const store = await h.open();
      const created = await store.create(h.podKey('a'), h.pod('a'));
      const updated = await store.update(h.podKey('a'), { ...{}, ...created.object, spec: { nodeName: 'n1' } }, { expectedRevision: created.revision });
      expectConsistent(updated, h.podKey('a'));
      expect(updated.revision).toBeGreaterThan(created.revision);
      expect(updated.object.spec).toEqual({ nodeName: 'n1' });
      expect(await store.get(h.podKey('a'))).toEqual(updated);
    });

    it('fails with Conflict on a stale expected revision and NotFound on a missing key', async () => {
      const store = await h.open();
      const created = await store.create(h.podKey('a'), h.pod('a'));
      const current = await store.update(h.podKey('a'), created.object);
      await rejectsWith(store.update(h.podKey('a'), h.pod('a', { spec: { stale: true } }), { expectedRevision: created.revision }), 'Conflict');
      expect(await store.get(h.podKey('a'))).toEqual(current);
      await rejectsWith(store.update(h.podKey('missing'), h.pod('missing')), 'NotFound');
      await rejectsWith(store.update(h.podKey('missing'), h.pod('missing'), { expectedRevision: created.revision }), 'NotFound');
      expect(await store.get(h.podKey('missing'))).toBeUndefined();
    });

    it('without an expected revision, the write with the highest revision wins', async () => {
      const store = await h.open();
      await store.create(h.podKey('a'), h.pod('a'));
      const writes = await Promise.all([1, 2, 3, 4, 5].map((n) => store.update(h.podKey('a'), h.pod('a', { spec: { n } }))));
      expect(new Set(writes.map((write) => write.revision)).size).toBe(writes.length);
      const last = writes.reduce((latest, write) => (write.revision > latest.revision ? write : latest));
      expect(await store.get(h.podKey('a'))).toEqual(last);
    });
  });

  describe('delete', () => {
    it('returns the deleted object at the revision of the deletion', async () => {
      const store = await h.open();
      const created = await store.create(h.podKey('a'), h.pod('a'));
      const deleted = await store.delete(h.podKey('a'));
      expectConsistent(deleted, h.podKey('a'));
      expect(deleted.revision).toBeGreaterThan(created.revision);
      expect(deleted.object.metadata.name).toBe('a');
      expect(store.revision()).toBeGreaterThanOrEqual(deleted.revision);
      expect(await store.get(h.podKey('a'))).toBeUndefined();
      await rejectsWith(store.delete(h.podKey('a')), 'NotFound');
    });

    it('is conditional on the expected revision', async () => {
      const store = await h.open();
      const created = await store.create(h.podKey('a'), h.pod('a'));
      const current = await store.update(h.podKey('a'), created.object);
      await rejectsWith(store.delete(h.podKey('a'), { expectedRevision: created.revision }), 'Conflict');
      expect(await store.get(h.podKey('a'))).toEqual(current);
      const deleted = await store.delete(h.podKey('a'), { expectedRevision: current.revision });
      expect(deleted.object.spec).toEqual(current.object.spec);
      expect(await store.get(h.podKey('a'))).toBeUndefined();
      await rejectsWith(store.delete(h.podKey('a'), { expectedRevision: current.revision }), 'NotFound');
    });

    it('lets the key be created again afterwards', async () => {
      const store = await h.open();
      await store.create(h.podKey('a'), h.pod('a', { spec: { life: 1 } }));
      const deleted = await store.delete(h.podKey('a'));
      const again = await store.create(h.podKey('a'), h.pod('a', { spec: { life: 2 } }));
      expect(again.revision).toBeGreaterThan(deleted.revision);
      expect((await store.get(h.podKey('a')))?.object.spec).toEqual({ life: 2 });
    });
  });

  describe('guaranteedUpdate', () => {
    it('creates, modifies, and leaves alone', async () => {
      const store = await h.open();
      const created = await store.guaranteedUpdate(h.podKey('a'), (current) => (current ? undefined : h.pod('a')));
      expectConsistent(created!, h.podKey('a'));
      const modified = await store.guaranteedUpdate(h.podKey('a'), (current) => ({ ...{}, ...current!.object, status: { phase: 'Running' } }));
      expectConsistent(modified!, h.podKey('a'));
      expect(modified!.revision).toBeGreaterThan(created!.revision);
      expect(modified!.object.status).toEqual({ phase: 'Running' });
      const untouched = await store.guaranteedUpdate(h.podKey('a'), () => undefined);
      expect(untouched).toEqual(modified);
      expect(await store.get(h.podKey('a'))).toEqual(modified);
      expect(await store.guaranteedUpdate(h.podKey('missing'), () => undefined)).toBeUndefined();
      expect(await store.get(h.podKey('missing'))).toBeUndefined();
    });

    it('hands fn the current object', async () => {
      const store = await h.open();
      const created = await store.create(h.podKey('a'), h.pod('a', { spec: { v: 1 } }));
      const seen: unknown[] = [];
      await store.guaranteedUpdate(h.podKey('a'), (current) => {
        seen.push(current);
        return undefined;
      });
      expect(seen.at(-1)).toEqual(created);
    });

    it('loses no update when many callers read-modify-write one key at once', async () => {
      const store = await h.open();
      const increment = () =>
        store.guaranteedUpdate(h.podKey('counter'), (current) => {
          const count = (current?.object.spec as { count: number } | undefined)?.count ?? 0;
          return h.pod('counter', { spec: { count: count + 1 } });
        });
      const results = await Promise.all(Array.from({ length: 30 }, increment));
      expect(new Set(results.map((result) => result!.revision)).size).toBe(30);
      const counts = results.map((result) => (result!.object.spec as { count: number }).count).sort((a, b) => a - b);
      expect(counts).toEqual(Array.from({ length: 30 }, (_, n) => n + 1));
      const counter = await store.get(h.podKey('counter'));
      expect(counter?.object.spec).toEqual({ count: 30 });
      expect(counter?.revision).toBe(Math.max(...results.map((result) => result!.revision)));
    });

    it('writes nothing when fn throws, and rejects with its error', async () => {
      const store = await h.open();
      const created = await store.create(h.podKey('a'), h.pod('a'));
      await expect(
        store.guaranteedUpdate(h.podKey('a'), () => {
          throw new Error('admission said no');
        }),
      ).rejects.toThrow('admission said no');
      expect(await store.get(h.podKey('a'))).toEqual(created);
    });
  });
}
