import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recordingLogger, waitFor } from '@skiff/kernel';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '@skiff/api';
import type { CodedStoreError } from './errors.js';
import { mountSmallDisk, type SmallDisk } from './test-support/small-disk.js';
import { TempStores } from './test-support/temp-store.js';
import { StoreError, type StoreEvent } from './types.js';

const stores = new TempStores();
let disk: SmallDisk;
beforeAll(() => {
  disk = mountSmallDisk(4);
});
afterEach(() => stores.cleanup());
afterAll(() => disk?.unmount());

const NO_SPACE_MESSAGE =
  /^the store's disk is full \((ENOSPC|EIO on a short write, \d+ KiB free)\): writes are refused until space is freed; reads keep working$/;

function configMap(name: string, value: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { value } };
}

function widget(name: string, size: string): KubeObject {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec: { size, colour: 'blue' } };
}

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

describe('a full disk', () => {
  it('refuses writes with NoSpace, keeps reads and watches going, and takes writes again once space is freed', async () => {
    const path = join(disk.dir, 'store');
    // Space to give back later: deleting a file frees it at once, where deleting objects needs new pages first.
    const filler = join(disk.dir, 'filler');
    writeFileSync(filler, Buffer.alloc(512 * 1024, 1));
    const logger = recordingLogger();
    const store = await stores.open({ path, logger });
    const watchStop = new AbortController();
    const seen: StoreEvent[] = [];
    const watching = (async () => {
      for await (const event of store.watch('/registry/', 0, watchStop.signal)) seen.push(event);
    })();

    // Four writes at a time, so that failing transactions hold several writes.
    const acked = new Map<string, number>();
    let refused: unknown;
    const value = 'v'.repeat(48 * 1024);
    for (let round = 0; refused === undefined && round < 500; round++) {
      const keys = Array.from({ length: 4 }, (_, i) => `/registry/configmaps/default/fill-${round}-${i}`);
      const results = await Promise.allSettled(keys.map((key) => store.create(key, configMap(key, value))));
      results.forEach((result, i) => {
        if (result.status === 'fulfilled') acked.set(keys[i]!, result.value.revision);
        else refused ??= result.reason;
      });
    }
    expect(refused).toBeInstanceOf(StoreError);
    expect(refused).toMatchObject({ kind: 'NoSpace', code: 'SKIFF_ERR_STORE_NO_SPACE', message: expect.stringMatching(NO_SPACE_MESSAGE) });
    const lastAcked = Math.max(...acked.values());
    expect(store.revision()).toBe(lastAcked);

    // Still full: a write larger than anything LMDB could reuse is refused too. It brings shapes the store has
    // never saved, which the write after space returns uses again.
    const big = await rejection(store.create('/registry/widgets/big', widget('big', 'x'.repeat(1024 * 1024))));
    expect((big as CodedStoreError).code).toBe('SKIFF_ERR_STORE_NO_SPACE');

    // Reads and the watch go on.
    for (const [key, revision] of acked) expect((await store.get(key))?.revision, key).toBe(revision);
    expect((await store.list('/registry/configmaps/')).items).toHaveLength(acked.size);
    await waitFor('the watch to deliver every acknowledged write', () => seen.length === acked.size);
    expect(seen.map((event) => event.revision)).toEqual([...acked.values()].sort((a, b) => a - b));
    // The first failure is logged once, naming the store's folder; the rest only at debug level.
    const errors = logger.records.filter((record) => record.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ fields: { code: 'SKIFF_ERR_STORE_NO_SPACE', path } });

    rmSync(filler);
    const small = await store.create('/registry/widgets/small', widget('small', 'fits'));
    expect(small.revision).toBe(lastAcked + 1);
    await waitFor('the watch to deliver the write made once space returned', () => seen.at(-1)?.key === '/registry/widgets/small');
    expect(logger.records.some((record) => record.level === 'info' && record.message === 'store commits succeed again')).toBe(true);
    watchStop.abort();
    await watching;
    await store.close();

    // Everything acknowledged is there after a restart, decodable, with one log entry per revision.
    const reopened = await stores.open({ path });
    for (const [key, revision] of acked) expect((await reopened.get(key))?.revision, key).toBe(revision);
    expect((await reopened.get('/registry/widgets/small'))?.object).toEqual(small.object);
    expect(await reopened.get('/registry/widgets/big')).toBeUndefined();
    const replayed: number[] = [];
    for await (const event of reopened.watch('/registry/', 0, new AbortController().signal)) {
      replayed.push(event.revision);
      if (event.revision === reopened.revision()) break;
    }
    expect(replayed).toEqual(Array.from({ length: lastAcked + 1 }, (_, i) => i + 1));
  });
});
