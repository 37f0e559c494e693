import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Kernel, KernelError } from '@skiff/kernel';
import storePlugin, { LmdbStore } from './index.js';
import { TempStores, pod, podKey } from './test-support/temp-store.js';

const dirs = new TempStores();
afterEach(() => dirs.cleanup());

function kernelIn(rootDir: string): Kernel {
  return new Kernel({ config: { rootDir, dataDir: join(rootDir, 'state'), logLevel: 'silent' } });
}

describe('@skiff/store plugin', () => {
  it('opens the store under <dataDir>/store at start, provides it, and closes it at stop', async () => {
    const rootDir = await dirs.dir();
    const kernel = kernelIn(rootDir).use(storePlugin);
    await kernel.start();
    const store = kernel.resolve('store');
    expect(store).toBeInstanceOf(LmdbStore);
    await store.create(podKey('a'), pod('a'));
    expect(existsSync(join(rootDir, 'state', 'store', 'data.mdb'))).toBe(true);
    await kernel.stop();
    await expect(store.get(podKey('a'))).rejects.toMatchObject({ kind: 'Closed' });
  });

  it('takes a path relative to the config folder, and keeps the data across restarts', async () => {
    const rootDir = await dirs.dir();
    const first = kernelIn(rootDir).use(storePlugin, { path: 'elsewhere', retainRevisions: 50 });
    await first.start();
    await first.resolve('store').create(podKey('a'), pod('a'));
    await first.stop();
    expect(existsSync(join(rootDir, 'elsewhere', 'data.mdb'))).toBe(true);

    const second = kernelIn(rootDir).use(storePlugin, { path: 'elsewhere' });
    await second.start();
    expect((await second.resolve('store').get(podKey('a')))?.revision).toBe(1);
    await second.stop();
  });

  it('rejects bad options when the plugin loads, naming the option', () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } });
    expect(() => kernel.use(storePlugin, { retainRevisions: -1 })).toThrow(KernelError);
    expect(() => kernel.use(storePlugin, { compactionIntervalMs: 'often' })).toThrow(/compactionIntervalMs/);
    expect(() => kernel.use(storePlugin, { pth: '/tmp/x' })).toThrow(/unknown option "pth"/);
  });
});
