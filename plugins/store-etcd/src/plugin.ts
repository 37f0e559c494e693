import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { definePlugin, LIFECYCLE_STAGE, packageInfo, type PluginOptions } from '@skiff/kernel';
import type { Store } from '@skiff/store';
import { openEtcdStore, type EtcdStore } from './etcd-store.js';
import { ETCD_STORE_DEFAULTS } from './options.js';

const PLUGIN_NAME = '@skiff/plugin-store-etcd';

export type EtcdStorePluginOptions = PluginOptions<typeof plugin>;

/**
 * Connects to etcd before the API server starts and provides it to the kernel as `store`, in place of the LMDB
 * store: `["@skiff/store", false], ["@skiff/plugin-store-etcd", { "endpoints": ["http://127.0.0.1:2379"] }]`.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  provides: ['store'],
  wants: ['storageSealer'],
  options: {
    type: 'object',
    required: ['endpoints'],
    properties: {
      endpoints: {
        type: 'array',
        minItems: 1,
        items: { type: 'string', pattern: '^https?://[^/]+:[0-9]+/?$' },
        description: 'Client URLs of the etcd members (http://host:port or https://host:port).',
      },
      keyPrefix: {
        type: 'string',
        default: ETCD_STORE_DEFAULTS.keyPrefix,
        description: 'Put before every key, so several clusters can share one etcd (as kube-apiserver --etcd-prefix); "" keeps /registry/….',
      },
      caFile: { type: 'string', description: 'CA bundle that signed the members’ serving certificates (https endpoints).' },
      certFile: { type: 'string', description: 'Client certificate for etcd (mutual TLS).' },
      keyFile: { type: 'string', description: 'Key of the client certificate.' },
      compactionIntervalMs: {
        type: 'integer',
        minimum: 0,
        default: ETCD_STORE_DEFAULTS.compactionIntervalMs,
        description: 'How often etcd is compacted up to the revision of the previous interval; 0 turns it off.',
      },
      watchCacheSize: {
        type: 'integer',
        minimum: 1,
        default: ETCD_STORE_DEFAULTS.watchCacheSize,
        description: 'Recent events kept in memory for watches that start a little in the past.',
      },
      retryForMs: {
        type: 'integer',
        minimum: 0,
        default: ETCD_STORE_DEFAULTS.retryForMs,
        description: 'How long a call or watch keeps trying other members before it fails.',
      },
    },
  },
  apply(kernel, options) {
    let store: EtcdStore | undefined;
    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.STORE, {
      start: async () => {
        const file = (path: string | undefined) => (path ? readFileSync(resolve(kernel.config.rootDir, path)) : undefined);
        store = await openEtcdStore({
          endpoints: options.endpoints,
          keyPrefix: options.keyPrefix,
          tls: { caPem: file(options.caFile), certPem: file(options.certFile), keyPem: file(options.keyFile) },
          compactionIntervalMs: options.compactionIntervalMs,
          watchCacheSize: options.watchCacheSize,
          retryForMs: options.retryForMs,
          logger: kernel.logger.child({ component: PLUGIN_NAME }),
          sealer: kernel.hasComponent('storageSealer') ? kernel.resolve('storageSealer') : undefined,
        });
        kernel.provide('store', store satisfies Store);
      },
      stop: async () => {
        await store?.close();
        store = undefined;
      },
    });
  },
});
export default plugin;
