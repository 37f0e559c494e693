import type { MessagePort } from 'node:worker_threads';
import type { Logger } from '@skiff/kernel';
import { StoreUsageError } from './errors.js';
import type { ValueSealer } from './sealing.js';

export interface LmdbStoreOptions {
  /** Folder holding the LMDB files; created if missing. */
  path: string;
  /** How often the store compacts its event log, in milliseconds; 0 turns periodic compaction off. Default 60000. */
  compactionIntervalMs?: number;
  /** How many of the latest revisions periodic compaction keeps in the event log. Default 10000. */
  retainRevisions?: number;
  /**
   * Live events one watcher may hold before it stops buffering and catches up from the event log
   * instead. Default 1000.
   */
  watchBufferSize?: number;
  /** Where compaction and commit failures are reported. Default: nowhere. */
  logger?: Logger;
  /** Encrypts the values of the keys it claims (encryption at rest). Default: none, values are stored as they are. */
  sealer?: ValueSealer;
  /**
   * Opened by several threads of one process at once (the API server on every core). One thread, the primary, writes:
   * the others (`primary` set) send it their writes, and read every write back from the event log for their watchers,
   * in revision order. `announce` is a buffer of `CROSS_THREAD_BUFFER_BYTES` shared by every thread of the store (see
   * sharedBuffer in @skiff/kernel), where the primary announces its commits.
   */
  threads?: {
    announce: SharedArrayBuffer;
    /**
     * A worker thread's channel to the primary thread's store (LmdbStore.serveThread): its writes are made there, in
     * the primary's transactions. Absent on the primary.
     */
    primary?: MessagePort;
  };
}

export type ResolvedStoreOptions = Required<Omit<LmdbStoreOptions, 'logger' | 'sealer' | 'threads'>> & {
  logger: Logger | undefined;
  sealer: ValueSealer | undefined;
  threads: LmdbStoreOptions['threads'];
};

/** The size of the buffer a store shared by threads announces its commits in. */
export const CROSS_THREAD_BUFFER_BYTES = 8;

export const STORE_DEFAULTS = Object.freeze({
  compactionIntervalMs: 60_000,
  retainRevisions: 10_000,
  watchBufferSize: 10_000,
});

function wholeNumber(name: string, value: number | undefined, fallback: number, minimum: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < minimum)
    throw new StoreUsageError('SKIFF_ERR_STORE_ARGUMENT_INVALID', { name, detail: `expected a whole number >= ${minimum}, got ${value}` });
  return value;
}

export function resolveStoreOptions(options: LmdbStoreOptions): ResolvedStoreOptions {
  if (typeof options.path !== 'string' || options.path === '')
    throw new StoreUsageError('SKIFF_ERR_STORE_ARGUMENT_INVALID', { name: 'path', detail: 'expected a folder path' });
  return {
    path: options.path,
    compactionIntervalMs: wholeNumber('compactionIntervalMs', options.compactionIntervalMs, STORE_DEFAULTS.compactionIntervalMs, 0),
    retainRevisions: wholeNumber('retainRevisions', options.retainRevisions, STORE_DEFAULTS.retainRevisions, 0),
    watchBufferSize: wholeNumber('watchBufferSize', options.watchBufferSize, STORE_DEFAULTS.watchBufferSize, 1),
    logger: options.logger,
    sealer: options.sealer,
    threads: options.threads,
  };
}
