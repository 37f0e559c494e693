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
    // msgpack decodes about 1.6x faster than JSON for Kubernetes-shaped objects (see bench/store.bench.mjs).
    encoding: 'msgpack',
  });
  return {
    root,
    objects: root.openDB<KubeObject, string>('objects', {}),
    events: root.openDB<LogRecord, number>('events', {}),
    meta: root.openDB<number, MetaKey>('meta', {}),
  };
}
