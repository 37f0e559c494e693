export { default, type StorePluginOptions } from './plugin.js';
export { LmdbStore, openLmdbStore } from './lmdb-store.js';
export { STORE_DEFAULTS, CROSS_THREAD_BUFFER_BYTES, type LmdbStoreOptions } from './options.js';
export { STORE_ERRORS, CodedStoreError, StoreUsageError, type StoreErrorCode } from './errors.js';
export * from './types.js';
export { isSealed, type SealedValue, type ValueSealer } from './sealing.js';
