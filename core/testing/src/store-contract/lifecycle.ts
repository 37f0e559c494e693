import { describe, expect, it } from 'vitest';
import { rejectsWith, watchFailure, type ContractHarness } from './harness.js';

export function describeLifecycle(h: ContractHarness): void {
  describe('close', () => {
    it('answers Closed to every later call, and a second close does no harm', async () => {
      const store = await h.open();
      await store.create(h.podKey('a'), h.pod('a'));
      await store.close();
      await store.close();
      await rejectsWith(store.get(h.podKey('a')), 'Closed');
      await rejectsWith(store.list(h.podPrefix()), 'Closed');
      await rejectsWith(store.create(h.podKey('b'), h.pod('b')), 'Closed');
      await rejectsWith(store.update(h.podKey('a'), h.pod('a')), 'Closed');
      await rejectsWith(
        store.guaranteedUpdate(h.podKey('a'), () => h.pod('a')),
        'Closed',
      );
      await rejectsWith(store.delete(h.podKey('a')), 'Closed');
      expect((await watchFailure(store, h.podPrefix(), 0)).kind).toBe('Closed');
    });
  });

  if (!h.factory.reopen) return;

  describe('reopen', () => {
    it('keeps every acknowledged write, and numbers later writes after them', async () => {
      const store = await h.open();
      const a = await store.create(h.podKey('a'), h.pod('a'));
      const b = await store.create(h.podKey('b'), h.pod('b'));
      const updated = await store.update(h.podKey('b'), h.pod('b', { spec: { v: 2 } }), { expectedRevision: b.revision });
      const deleted = await store.delete(h.podKey('a'), { expectedRevision: a.revision });
      const counted = await Promise.all(Array.from({ length: 20 }, (_, n) => store.guaranteedUpdate(h.podKey(`c${n}`), () => h.pod(`c${n}`, { spec: { n } }))));
      const last = Math.max(deleted.revision, ...counted.map((stored) => stored!.revision));

      const reopened = await h.reopen(store);
      expect(reopened.revision()).toBeGreaterThanOrEqual(last);
      expect(await reopened.get(h.podKey('a'))).toBeUndefined();
      expect(await reopened.get(h.podKey('b'))).toEqual(updated);
      for (const stored of counted) expect(await reopened.get(stored!.key)).toEqual(stored);
      expect((await reopened.list(h.podPrefix())).items.map((item) => item.key)).toEqual([h.podKey('b'), ...counted.map((stored) => stored!.key).sort()]);
      const next = await reopened.create(h.podKey('d'), h.pod('d'));
      expect(next.revision).toBeGreaterThan(last);
      expect(next.object.metadata.resourceVersion).toBe(String(next.revision));
    });

    it('keeps the history for watches that resume after the reopen', async () => {
      const store = await h.open();
      const before = store.revision();
      const created = await store.create(h.podKey('a'), h.pod('a'));
      const updated = await store.update(h.podKey('a'), h.pod('a', { spec: { v: 2 } }));
      const reopened = await h.reopen(store);
      const events = [];
      for await (const event of reopened.watch(h.podPrefix(), before, new AbortController().signal)) {
        events.push(event);
        if (event.revision === updated.revision) break;
      }
      expect(events.map((event) => [event.type, event.revision])).toEqual([
        ['ADDED', created.revision],
        ['MODIFIED', updated.revision],
      ]);
      expect(events[1]!.prevObject).toEqual(created.object);
    });
  });
}
