import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '@skiff/kernel';
import { StoreError, type StoreEvent } from './types.js';
import { TempStores, pod, podKey } from './test-support/temp-store.js';

const stores = new TempStores();
afterEach(() => stores.cleanup());

/** Reads `count` events from a watch, failing (instead of hanging) if they do not arrive in time. */
async function take(events: AsyncIterator<StoreEvent>, count: number, timeoutMs = 5_000): Promise<StoreEvent[]> {
  const taken: StoreEvent[] = [];
  const deadline = Date.now() + timeoutMs;
  while (taken.length < count) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`only ${taken.length} of ${count} events arrived`)), Math.max(0, deadline - Date.now()));
    });
    const next = await Promise.race([events.next(), timeout]).finally(() => clearTimeout(timer));
    if (next.done) throw new Error(`the watch ended after ${taken.length} of ${count} events`);
    taken.push(next.value);
  }
  return taken;
}

function open(store: { watch: (prefix: string, from: number, signal: AbortSignal) => AsyncIterable<StoreEvent> }, prefix: string, from: number) {
  const controller = new AbortController();
  const events = store.watch(prefix, from, controller.signal)[Symbol.asyncIterator]();
  return { events, abort: () => controller.abort() };
}

const summary = (event: StoreEvent) => `${event.type} ${event.key} @${event.revision}`;

describe('watch', () => {
  it('replays history after fromRevision, then continues with live events', async () => {
    const store = await stores.open();
    await store.create(podKey('a'), pod('a'));
    await store.update(podKey('a'), pod('a'));
    await store.create(podKey('b'), pod('b'));
    const { events } = open(store, '/registry/pods/', 1);
    expect((await take(events, 2)).map(summary)).toEqual([`MODIFIED ${podKey('a')} @2`, `ADDED ${podKey('b')} @3`]);
    await store.delete(podKey('a'));
    const [deleted] = await take(events, 1);
    expect(deleted).toMatchObject({
      type: 'DELETED',
      revision: 4,
      object: { metadata: { name: 'a', resourceVersion: '4' } },
      prevObject: { metadata: { resourceVersion: '2' } },
    });
  });

  it('carries the previous object on MODIFIED events, from the log and live', async () => {
    const store = await stores.open();
    await store.create(podKey('a'), pod('a', 'default', { spec: { v: 1 } }));
    await store.update(podKey('a'), pod('a', 'default', { spec: { v: 2 } }));
    const { events } = open(store, '/registry/pods/', 0);
    await store.update(podKey('a'), pod('a', 'default', { spec: { v: 3 } }));
    const [added, fromLog, live] = await take(events, 3);
    expect(added).not.toHaveProperty('prevObject');
    expect([fromLog!.prevObject?.spec, fromLog!.object.spec]).toEqual([{ v: 1 }, { v: 2 }]);
    expect([live!.prevObject?.spec, live!.object.spec]).toEqual([{ v: 2 }, { v: 3 }]);
  });

  it('only delivers keys under the prefix', async () => {
    const store = await stores.open();
    const { events } = open(store, '/registry/pods/kube-system/', 0);
    await store.create(podKey('a'), pod('a'));
    await store.create(podKey('dns', 'kube-system'), pod('dns', 'kube-system'));
    await store.create(podKey('b'), pod('b'));
    await store.create(podKey('proxy', 'kube-system'), pod('proxy', 'kube-system'));
    expect((await take(events, 2)).map((event) => event.object.metadata.name)).toEqual(['dns', 'proxy']);
  });

  it('hands over from replay to live with no gap and no duplicate while writes keep landing', async () => {
    const store = await stores.open();
    const total = 600;
    const writer = (async () => {
      for (let batch = 0; batch < total / 20; batch++) {
        await Promise.all(Array.from({ length: 20 }, (_, n) => store.create(podKey(`p${batch}-${n}`), pod(`p${batch}-${n}`))));
      }
    })();
    // Start watches at several points of the stream, each from a revision already in the past, and
    // consume them while the writer keeps going.
    const consumers: { from: number; received: Promise<StoreEvent[]> }[] = [];
    for (let point = 1; point <= 4; point++) {
      // Polled often, so each watch starts while the writer is still going.
      await waitFor(`revision ${point * 100}`, () => store.revision() >= point * 100, { intervalMs: 1 });
      const from = store.revision() - 15;
      consumers.push({ from, received: take(open(store, '/registry/', from).events, total - from) });
    }
    await writer;
    for (const { from, received } of consumers) {
      const revisions = (await received).map((event) => event.revision);
      expect(revisions).toEqual(Array.from({ length: total - from }, (_, n) => from + 1 + n));
    }
  });

  it('replays a long history in chunks, without repeating events that also arrived live', async () => {
    const store = await stores.open();
    for (let batch = 0; batch < 6; batch++) {
      await Promise.all(Array.from({ length: 100 }, (_, n) => store.create(podKey(`p${batch}-${n}`), pod(`p${batch}-${n}`))));
    }
    const { events } = open(store, '/registry/', 0);
    const [first] = await take(events, 1);
    // Written while the watcher is still replaying: it reaches both the live buffer and the log.
    await store.create(podKey('late'), pod('late'));
    const rest = await take(events, 600);
    expect([first!, ...rest].map((event) => event.revision)).toEqual(Array.from({ length: 601 }, (_, n) => n + 1));
    await store.create(podKey('later'), pod('later'));
    expect((await take(events, 1)).map(summary)).toEqual([`ADDED ${podKey('later')} @602`]);
  });

  it('starts after fromRevision even when that revision is in the future', async () => {
    const store = await stores.open();
    const { events } = open(store, '/registry/', 2);
    for (const name of ['a', 'b', 'c']) await store.create(podKey(name), pod(name));
    expect((await take(events, 1)).map(summary)).toEqual([`ADDED ${podKey('c')} @3`]);
  });

  it('throws Compacted at once for a revision older than the compacted one', async () => {
    const store = await stores.open();
    for (const name of ['a', 'b', 'c']) await store.create(podKey(name), pod(name));
    await store.compact(2);
    expect(store.compactedRevision()).toBe(2);
    let error: unknown;
    try {
      store.watch('/registry/', 1, new AbortController().signal);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).kind).toBe('Compacted');
    const { events } = open(store, '/registry/', 2);
    expect((await take(events, 1)).map(summary)).toEqual([`ADDED ${podKey('c')} @3`]);
  });

  it('ends when its signal aborts, and stops holding events', async () => {
    const store = await stores.open();
    const { events, abort } = open(store, '/registry/', 0);
    const pending = events.next();
    abort();
    expect(await pending).toEqual({ value: undefined, done: true });
    await store.create(podKey('a'), pod('a'));
    expect(await events.next()).toEqual({ value: undefined, done: true });
  });

  it('stops on return(), as a for-await break does', async () => {
    const store = await stores.open();
    for (const name of ['a', 'b', 'c']) await store.create(podKey(name), pod(name));
    const seen: string[] = [];
    for await (const event of store.watch('/registry/', 0, new AbortController().signal)) {
      seen.push(event.object.metadata.name!);
      if (seen.length === 2) break;
    }
    expect(seen).toEqual(['a', 'b']);
  });

  it('lets a slow watcher fall behind without blocking writers, then catches it up from the log', async () => {
    const store = await stores.open({ watchBufferSize: 4 });
    const { events } = open(store, '/registry/', 0);
    for (let n = 0; n < 50; n++) await store.create(podKey(`p${n}`), pod(`p${n}`));
    const revisions = (await take(events, 50)).map((event) => event.revision);
    expect(revisions).toEqual(Array.from({ length: 50 }, (_, n) => n + 1));
    await store.create(podKey('live'), pod('live'));
    expect((await take(events, 1)).map(summary)).toEqual([`ADDED ${podKey('live')} @51`]);
  });

  it('ends a slow watcher with Compacted when the log it needs was compacted away', async () => {
    const store = await stores.open({ watchBufferSize: 4 });
    const { events } = open(store, '/registry/', 0);
    for (let n = 0; n < 20; n++) await store.create(podKey(`p${n}`), pod(`p${n}`));
    await store.compact(10);
    await expect(take(events, 20)).rejects.toMatchObject({ kind: 'Compacted' });
    expect(await events.next()).toEqual({ value: undefined, done: true });
  });

  it('ends every watcher with Closed when the store closes', async () => {
    const store = await stores.open();
    const { events } = open(store, '/registry/', 0);
    const pending = events.next();
    await store.close();
    await expect(pending).rejects.toMatchObject({ kind: 'Closed' });
  });

  it('shares one frozen copy of a live event between watchers, apart from the writer', async () => {
    const store = await stores.open();
    const first = open(store, '/registry/', 0).events;
    const second = open(store, '/registry/', 0).events;
    // Both watchers are waiting live (their history is empty) when the write lands.
    const arrivals = Promise.all([first.next(), second.next()]);
    const created = await store.create(podKey('a'), pod('a'));
    const [{ value: one }, { value: two }] = await arrivals;
    expect(one!.object).toBe(two!.object);
    expect(Object.isFrozen(one!.object.metadata)).toBe(true);
    expect(one!.object).not.toBe(created.object);
    expect(Object.isFrozen(created.object)).toBe(false);
  });
});
