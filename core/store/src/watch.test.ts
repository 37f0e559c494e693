// What every Store must do is checked by @skiff/testing's describeStoreContract, which
// core/testing/src/store-contract/lmdb.test.ts runs on LmdbStore; the tests here are LmdbStore's own: synchronous errors, slow watchers, closing and shared event copies.
import { afterEach, describe, expect, it } from 'vitest';
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
