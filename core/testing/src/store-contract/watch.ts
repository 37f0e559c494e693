import { describe, expect, it } from 'vitest';
import { waitFor } from '@skiff/kernel';
import type { StoreEvent } from '@skiff/store';
import { createMany, openWatch, type OpenWatch, rejectsWith, summary, take, watchFailure, type ContractHarness } from './harness.js';

const ascending = (revisions: Iterable<number>) => [...revisions].sort((a, b) => a - b);

function expectConsistent(events: StoreEvent[]): void {
  for (const event of events) expect(event.object.metadata.resourceVersion).toBe(String(event.revision));
}

export function describeWatch(h: ContractHarness): void {
  describe('watch', () => {
    it('replays the events after fromRevision (exclusive), then delivers live ones, in order', async () => {
      const store = await h.open();
      const created = await store.create(h.podKey('a'), h.pod('a'));
      const updated = await store.update(h.podKey('a'), h.pod('a', { spec: { v: 2 } }));
      const other = await store.create(h.podKey('b'), h.pod('b'));
      const { events, abort } = openWatch(store, h.podPrefix(), created.revision);
      const replayed = await take(events, 2);
      expect(replayed.map(summary)).toEqual([`MODIFIED ${h.podKey('a')} @${updated.revision}`, `ADDED ${h.podKey('b')} @${other.revision}`]);
      expect(replayed[0]!.object).toEqual(updated.object);
      expect(replayed[1]!.object).toEqual(other.object);
      const deleted = await store.delete(h.podKey('a'));
      const [live] = await take(events, 1);
      expect(live).toMatchObject({
        type: 'DELETED',
        key: h.podKey('a'),
        revision: deleted.revision,
        object: { metadata: { name: 'a', resourceVersion: String(deleted.revision) } },
        prevObject: { metadata: { resourceVersion: String(updated.revision) }, spec: { v: 2 } },
      });
      abort();
    });

    it('carries the previous object on MODIFIED events, from the history and live, and none on ADDED', async () => {
      const store = await h.open();
      const before = store.revision();
      await store.create(h.podKey('a'), h.pod('a', { spec: { v: 1 } }));
      await store.update(h.podKey('a'), h.pod('a', { spec: { v: 2 } }));
      const { events, abort } = openWatch(store, h.podPrefix(), before);
      await store.update(h.podKey('a'), h.pod('a', { spec: { v: 3 } }));
      const [added, fromHistory, live] = await take(events, 3);
      expect(added).toMatchObject({ type: 'ADDED', object: { spec: { v: 1 } } });
      expect(added!.prevObject).toBeUndefined();
      expect(fromHistory).toMatchObject({ type: 'MODIFIED', prevObject: { spec: { v: 1 } }, object: { spec: { v: 2 } } });
      expect(live).toMatchObject({ type: 'MODIFIED', prevObject: { spec: { v: 2 } }, object: { spec: { v: 3 } } });
      expect(fromHistory!.prevObject!.metadata.resourceVersion).toBe(String(added!.revision));
      expect(live!.prevObject!.metadata.resourceVersion).toBe(String(fromHistory!.revision));
      expectConsistent([added!, fromHistory!, live!]);
      abort();
    });

    it('only delivers keys under its prefix', async () => {
      const store = await h.open();
      const prefix = `/registry/pods/${h.namespace}-system/`;
      const { events, abort } = openWatch(store, prefix, store.revision());
      await store.create(h.podKey('a'), h.pod('a'));
      await store.create(`${prefix}dns`, h.pod('dns'));
      await store.create(`/registry/pods/${h.namespace}-system-2/x`, h.pod('x'));
      await store.create(h.otherKey('services', 'dns'), h.pod('dns'));
      await store.create(`${prefix}proxy`, h.pod('proxy'));
      expect((await take(events, 2)).map((event) => event.key)).toEqual([`${prefix}dns`, `${prefix}proxy`]);
      // Nothing else was queued: the next event is the next write under the prefix.
      const last = await store.create(`${prefix}z`, h.pod('z'));
      expect((await take(events, 1)).map(summary)).toEqual([`ADDED ${prefix}z @${last.revision}`]);
      abort();
    });

    it('starts after fromRevision even when that revision is still to come', async () => {
      const store = await h.open();
      const from = store.revision() + 2;
      const { events, abort } = openWatch(store, h.podPrefix(), from);
      const written = [];
      for (const name of ['a', 'b', 'c', 'd']) written.push(await store.create(h.podKey(name), h.pod(name)));
      const expected = written.filter((stored) => stored.revision > from);
      expect((await take(events, expected.length)).map((event) => event.key)).toEqual(expected.map((stored) => stored.key));
      abort();
    });

    it('hands over from history to live events with no gap and no duplicate while writes keep landing', async () => {
      const store = await h.open();
      const total = 300;
      const acked: number[] = [];
      const writer = (async () => {
        for (let batch = 0; batch < total / 20; batch++) {
          const results = await Promise.all(Array.from({ length: 20 }, (_, n) => store.create(h.podKey(`p${batch}-${n}`), h.pod(`p${batch}-${n}`))));
          acked.push(...results.map((result) => result.revision));
        }
      })();
      // Watches start at several points of the stream, each from a revision already acknowledged, and read
      // while the writer keeps going.
      const consumers: { from: number; received: StoreEvent[]; watch: OpenWatch; reading: Promise<void> }[] = [];
      for (let point = 1; point <= 4; point++) {
        await waitFor(`${point * 60} acknowledged writes`, () => acked.length >= point * 60, { intervalMs: 1 });
        const from = ascending(acked)[acked.length - 15]!;
        const watch = openWatch(store, h.podPrefix(), from);
        const received: StoreEvent[] = [];
        const reading = (async () => {
          for (let next = await watch.events.next(); !next.done; next = await watch.events.next()) received.push(next.value);
        })();
        consumers.push({ from, received, watch, reading });
      }
      await writer;
      const all = ascending(acked);
      for (const { from, received, watch, reading } of consumers) {
        const expected = all.filter((revision) => revision > from);
        await waitFor(`the watch from ${from} to receive ${expected.length} events`, () => received.length >= expected.length);
        watch.abort();
        await reading;
        expect(received.map((event) => event.revision)).toEqual(expected);
      }
    });

    it('delivers a long history, and a write made while it is being replayed, each once', async () => {
      const store = await h.open();
      const before = store.revision();
      const written = await createMany(store, h, 600, 100);
      const { events, abort } = openWatch(store, h.podPrefix(), before);
      const [first] = await take(events, 1);
      const late = await store.create(h.podKey('late'), h.pod('late'));
      const rest = await take(events, 600);
      const received = [first!, ...rest];
      expect(received.map((event) => event.revision)).toEqual([...ascending(written.values()), late.revision]);
      expectConsistent(received);
      const later = await store.create(h.podKey('later'), h.pod('later'));
      expect((await take(events, 1)).map(summary)).toEqual([`ADDED ${h.podKey('later')} @${later.revision}`]);
      abort();
    });

    it('gives many concurrent watchers every event, in order', async () => {
      const store = await h.open();
      const from = store.revision();
      const watches = Array.from({ length: 20 }, () => openWatch(store, h.podPrefix(), from));
      const received = watches.map((watch) => take(watch.events, 100));
      const written = await createMany(store, h, 100, 25);
      const expected = ascending(written.values());
      for (const events of await Promise.all(received)) {
        expect(events.map((event) => event.revision)).toEqual(expected);
        expect(events.every((event) => event.type === 'ADDED' && written.get(event.key) === event.revision)).toBe(true);
      }
      for (const watch of watches) watch.abort();
    });

    it('ends when its signal aborts', async () => {
      const store = await h.open();
      const { events, abort } = openWatch(store, h.podPrefix(), store.revision());
      const pending = events.next();
      abort();
      expect(await pending).toEqual({ value: undefined, done: true });
      await store.create(h.podKey('a'), h.pod('a'));
      expect(await events.next()).toEqual({ value: undefined, done: true });
    });

    it('stops when the consumer breaks out of for-await', async () => {
      const store = await h.open();
      const before = store.revision();
      for (const name of ['a', 'b', 'c']) await store.create(h.podKey(name), h.pod(name));
      const seen: string[] = [];
      for await (const event of store.watch(h.podPrefix(), before, new AbortController().signal)) {
        seen.push(event.object.metadata.name!);
        if (seen.length === 2) break;
      }
      expect(seen).toEqual(['a', 'b']);
    });
  });

  describe('watch and compaction', () => {
    it('fails with Compacted from a revision older than the compacted one, and starts from the compacted one', async () => {
      const store = await h.open();
      const a = await store.create(h.podKey('a'), h.pod('a'));
      const b = await store.create(h.podKey('b'), h.pod('b'));
      const c = await store.create(h.podKey('c'), h.pod('c'));
      await store.compact(b.revision);
      expect(store.compactedRevision()).toBe(b.revision);
      expect((await watchFailure(store, h.podPrefix(), a.revision)).kind).toBe('Compacted');
      expect((await watchFailure(store, h.podPrefix(), b.revision - 1)).kind).toBe('Compacted');
      const { events, abort } = openWatch(store, h.podPrefix(), b.revision);
      expect((await take(events, 1)).map(summary)).toEqual([`ADDED ${h.podKey('c')} @${c.revision}`]);
      abort();
      await rejectsWith(store.list(h.podPrefix(), { revision: a.revision }), 'Compacted');
    });
  });
}
