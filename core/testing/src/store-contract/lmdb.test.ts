import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { LmdbStore, type Store } from '@skiff/store';
import { describeStoreContract } from './index.js';

const folders = new Map<Store, string>();
afterAll(() => Promise.all([...new Set(folders.values())].map((folder) => rm(folder, { recursive: true, force: true }))));

function openAt(path: string): LmdbStore {
  const store = new LmdbStore({ path, compactionIntervalMs: 0 });
  folders.set(store, path);
  return store;
}

describeStoreContract('LmdbStore', {
  open: async () => openAt(await mkdtemp(join(tmpdir(), 'skiff-store-contract-'))),
  reopen: async (closed) => openAt(folders.get(closed)!),
});
