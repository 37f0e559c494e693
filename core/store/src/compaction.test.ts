import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitFor } from '@skiff/kernel';
import type { StoreEvent } from './types.js';
import type { LmdbStore } from './lmdb-store.js';
import { TempStores, pod, podKey } from './test-support/temp-store.js';

const stores = new TempStores();
afterEach(async () => {
  vi.useRealTimers();
  await stores.cleanup();
});

/** Creates `count` new pods, named after the revision each is expected to get. */
async function writeMany(store: LmdbStore, count: number): Promise<void> {
  const first = store.revision() + 1;
  for (let start = 0; start < count; start += 500) {
    const names = Array.from({ length: Math.min(500, count - start) }, (_, n) => `p${first + start + n}`);
    await Promise.all(names.map((name) => store.create(podKey(name), pod(name))));
  }
}

async function firstEvent(events: AsyncIterable<StoreEvent>): Promise<StoreEvent | undefined> {
  for await (const event of events) return event;
  return undefined;
}

describe('compaction', () => {
  it('drops log entries up to the revision, and remembers it across a reopen', async () => {
    const path = await stores.dir();
    const store = await stores.open({ path });
    await writeMany(store, 10);
    await store.compact(4);
    expect(store.compactedRevision()).toBe(4);
    expect(() => store.watch('/registry/', 3, new AbortController().signal)).toThrow(expect.objectContaining({ kind: 'Compacted' }));
    expect((await firstEvent(store.watch('/registry/', 4, new AbortController().signal)))?.revision).toBe(5);
    await store.compact(2);
    expect(store.compactedRevision()).toBe(4);
    await store.close();

    const reopened = await stores.open({ path });
    expect(reopened.compactedRevision()).toBe(4);
    expect(reopened.revision()).toBe(10);
  });

  it('never compacts past the current revision, and handles long logs in several transactions', async () => {
    const store = await stores.open();
    await writeMany(store, 2_500);
    await store.compact(1_000_000);
    expect(store.compactedRevision()).toBe(2_500);
    const controller = new AbortController();
    const next = firstEvent(store.watch('/registry/', 2_500, controller.signal));
    await store.create(podKey('fresh'), pod('fresh'));
    expect((await next)?.revision).toBe(2_501);
  });

  it('runs periodically, keeping the configured number of revisions, until the store closes', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const store = await stores.open({ compactionIntervalMs: 1_000, retainRevisions: 5 });
    expect(vi.getTimerCount()).toBe(1);
    await writeMany(store, 20);
    expect(store.compactedRevision()).toBe(0);
    vi.advanceTimersByTime(1_000);
    await waitFor('compaction to revision 15', () => store.compactedRevision() === 15);
    await writeMany(store, 3);
    vi.advanceTimersByTime(1_000);
    await waitFor('compaction to revision 18', () => store.compactedRevision() === 18);
    await store.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});
