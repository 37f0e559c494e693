import type { Transaction } from 'lmdb';
import type { KubeObject } from '@skiff/api';
import type { StoreDatabases } from './databases.js';
import type { StoreEvent } from './types.js';

/** The revision an object was last written at, as the store recorded it in its resourceVersion. */
export function revisionOf(object: KubeObject): number {
  return Number(object.metadata.resourceVersion);
}

export interface Revisions {
  /** The last committed revision. */
  revision: number;
  /** The newest revision whose log entry has been dropped; the log holds everything after it. */
  compactedRevision: number;
}

/** Both revision counters, read from `transaction` (a read snapshot) or from the current write transaction. */
export function readRevisions(dbs: StoreDatabases, transaction?: Transaction): Revisions {
  const options = transaction ? { transaction } : undefined;
  return {
    revision: dbs.meta.get('revision', options) ?? 0,
    compactedRevision: dbs.meta.get('compactedRevision', options) ?? 0,
  };
}

export interface LogChunk {
  /** Events for keys under the prefix, in revision order. */
  events: StoreEvent[];
  /** The highest revision looked at (whether or not its key matched). */
  scannedThrough: number;
  /** True when the scan reached the end of the log in this snapshot. */
  reachedEnd: boolean;
}

/** Reads up to `maxEntries` log entries after `afterRevision` from one read snapshot. */
export function readLogChunk(dbs: StoreDatabases, transaction: Transaction, prefix: string, afterRevision: number, maxEntries: number): LogChunk {
  const events: StoreEvent[] = [];
  let scannedThrough = afterRevision;
  let scanned = 0;
  for (const { key: revision, value } of dbs.events.getRange({ start: afterRevision, exclusiveStart: true, limit: maxEntries, transaction })) {
    scanned++;
    scannedThrough = revision;
    if (value.key.startsWith(prefix)) events.push({ ...{}, ...dbs.codec.recordFromDisk(value), revision });
  }
  return { events, scannedThrough, reachedEnd: scanned < maxEntries };
}
