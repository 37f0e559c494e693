import { resolve } from 'node:path';
import { definePlugin, LIFECYCLE_STAGE, packageInfo, type PluginOptions } from '@skiff/kernel';
import { openLmdbStore, type LmdbStore } from './lmdb-store.js';
import type { Store } from './types.js';
import type { ValueSealer } from './sealing.js';
import { CROSS_THREAD_BUFFER_BYTES, STORE_DEFAULTS } from './options.js';

const PLUGIN_NAME = '@skiff/store';

declare module '@skiff/kernel' {
  interface Components {
    /** The cluster's storage (etcd semantics): the only component the API server writes to. */
    store: Store;
    /** Encryption at rest: what the store seals before writing (provided by an encryption plugin). */
    storageSealer: ValueSealer;
  }
}

export type StorePluginOptions = PluginOptions<typeof plugin>;

/** Opens the LMDB store before the API server starts and provides it to the kernel as `store`. */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  provides: ['store'],
  wants: ['storageSealer'],
  options: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Folder for the LMDB files. Default: <dataDir>/store.' },
      compactionIntervalMs: {
        type: 'integer',
        minimum: 0,
        default: STORE_DEFAULTS.compactionIntervalMs,
        description: 'How often the event log is compacted, in milliseconds; 0 turns it off.',
      },
      retainRevisions: {
        type: 'integer',
        minimum: 0,
        default: STORE_DEFAULTS.retainRevisions,
        description: 'How many of the latest revisions compaction keeps (watches and list pages can resume within them).',
      },
    },
  },
  apply(kernel, options) {
    let store: LmdbStore | undefined;
    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.STORE, {
      start: async () => {
        const { rootDir, dataDir } = kernel.config;
        const { threads } = kernel;
        store = await openLmdbStore({
          path: options.path ? resolve(rootDir, options.path) : resolve(rootDir, dataDir, 'store'),
          // With the API server on several threads, each opens the store; the primary alone compacts it.
          compactionIntervalMs: threads.primary ? options.compactionIntervalMs : 0,
          // A worker thread's writes are made by the primary's store, in its transactions.
          threads:
            threads.count > 1 ? { announce: threads.sharedBuffer(PLUGIN_NAME, CROSS_THREAD_BUFFER_BYTES), primary: threads.port(PLUGIN_NAME) } : undefined,
          retainRevisions: options.retainRevisions,
          logger: kernel.logger.child({ component: PLUGIN_NAME }),
          sealer: kernel.hasComponent('storageSealer') ? kernel.resolve('storageSealer') : undefined,
        });
        if (threads.primary && kernel.hasComponent('storageSealer')) {
          const rewritten = await store.resealStale();
          if (rewritten.objects + rewritten.events > 0)
            kernel.logger.child({ component: PLUGIN_NAME }).info(rewritten, 'values sealed again with the current key');
        }
        if (threads.primary && threads.count > 1) {
          const primaryStore = store;
          threads.serve(PLUGIN_NAME, (port) => primaryStore.serveThread(port));
        }
        kernel.provide('store', store);
      },
      stop: async () => {
        await store?.close();
        store = undefined;
      },
    });
  },
});
export default plugin;
