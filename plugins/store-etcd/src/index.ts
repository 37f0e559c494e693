export { default, type EtcdStorePluginOptions } from './plugin.js';
export { EtcdStore, openEtcdStore } from './etcd-store.js';
export { ETCD_STORE_DEFAULTS, type EtcdStoreOptions } from './options.js';
export { ETCD_STORE_ERRORS, EtcdStoreError, type EtcdStoreErrorCode } from './errors.js';
export type { EtcdTls } from './etcd-client.js';
