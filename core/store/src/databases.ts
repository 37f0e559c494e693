import { open, type Database, type RootDatabase } from 'lmdb';
import type { KubeObject } from '@skiff/api';
import type { StoreEvent } from './types.js';

/** One event-log entry, keyed by its revision. `prevObject` is the key's state just before this revision. */
export type LogRecord = Omit<StoreEvent, 'revision'>;

type MetaKey = 'revision' | 'compactedRevision';

/** The LMDB environment and its three databases; they share one write transaction per batch. */
export interface StoreDatabases {
  root: RootDatabase;
  /** key → the object as last written (metadata.resourceVersion set). */
  objects: Database<KubeObject, string>;
  /** revision → what changed at that revision; holds every revision after the compacted one. */
  events: Database<LogRecord, number>;
  /** revision → the last committed revision; compactedRevision → the newest revision dropped from `events`. */
  meta: Database<number, MetaKey>;
}

export function openDatabases(path: string): StoreDatabases {
  const root = open({
    path,
    // With overlappingSync (lmdb-js's default on Linux) a commit promise resolves before the data is
    // flushed. Turning it off makes every commit fsync before its promise resolves, so nothing is
    // acknowledged before it is durable.
    overlappingSync: false,
    encoding: 'msgpack',
  });
  // msgpack with structures shared through the database (msgpackr "records"): object shapes are
  // stored once instead of in every value. For a Pod that halves the value size and, measured with
  // reads interleaved on the same machine, reads 2.3x and writes 1.35x as fast as JSON (plain msgpack
  // was slower than JSON). lmdb-js keeps the structures under this key, hidden from range reads, and
  // saves new ones in the transaction that first uses them.
  const shared = { sharedStructuresKey: Symbol.for('skiff.structures') };
  return {
    root,
    objects: root.openDB<KubeObject, string>('objects', shared),
    events: root.openDB<LogRecord, number>('events', shared),
    meta: root.openDB<number, MetaKey>('meta', {}),
  };
}
