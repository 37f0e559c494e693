import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@skiff/api';
import { LmdbStore } from '../lmdb-store.js';
import type { LmdbStoreOptions } from '../options.js';

/** A temporary folder per test, removed (with every store opened in it closed) by `cleanup`. */
export class TempStores {
  private readonly opened: LmdbStore[] = [];
  private readonly dirs: string[] = [];

  async dir(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'skiff-store-'));
    this.dirs.push(dir);
    return dir;
  }

  /** Opens a store; compaction is off unless the test asks for it. */
  async open(options: Partial<LmdbStoreOptions> = {}): Promise<LmdbStore> {
    const store = new LmdbStore({ compactionIntervalMs: 0, ...options, path: options.path ?? (await this.dir()) });
    this.opened.push(store);
    return store;
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.opened.splice(0).map((store) => store.close()));
    await Promise.all(this.dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  }
}

export function pod(name: string, namespace = 'default', extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: 'web' } },
    spec: { containers: [{ name: 'nginx', image: 'nginx:1.25' }] },
    ...extra,
  };
}

export function podKey(name: string, namespace = 'default'): string {
  return `/registry/pods/${namespace}/${name}`;
}
