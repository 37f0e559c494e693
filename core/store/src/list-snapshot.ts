import type { Transaction } from 'lmdb';
import type { KubeObject } from '@skiff/api';
import type { StoreDatabases } from './databases.js';
import { revisionOf } from './event-log.js';
import { encodeContinue } from './continue-token.js';
import { compareKeys, prefixEnd } from './keys.js';
import type { ObjectCache } from './object-cache.js';
import type { ListResult, StoredObject } from './types.js';

export interface SnapshotListRequest {
  prefix: string;
  /** The revision to list at: the snapshot's own revision, or an older one still covered by the log. */
  revision: number;
  /** The snapshot's own (current) revision. */
  snapshotRevision: number;
  /** Continue after this key (exclusive). */
  afterKey?: string;
  /** 0 or absent: no limit. */
  limit?: number;
  filter?: (object: KubeObject) => boolean;
}

interface Entry {
  key: string;
  value: KubeObject;
}

/**
 * Lists keys under a prefix as they were at `request.revision`, all read from one read transaction.
 * At the snapshot's own revision that is a plain range read; at an older revision the range read is
 * rewound with the event log.
 */
export function listAtRevision(dbs: StoreDatabases, transaction: Transaction, request: SnapshotListRequest, cache?: ObjectCache): ListResult {
  const { prefix, afterKey, limit, filter } = request;
  const range = { start: afterKey ?? prefix, exclusiveStart: afterKey !== undefined, end: prefixEnd(prefix), transaction };
  const rewinding = request.revision < request.snapshotRevision;
  // The current state: keys from LMDB, unchanged objects from the cache, the rest decoded (and cached).
  const current: Iterable<Entry> = cache && !rewinding ? cachedEntries(dbs, transaction, range, cache) : openedEntries(dbs, range);
  const entries = rewinding ? rewind(current, statesAt(dbs, transaction, request)) : current;

  const items: StoredObject[] = [];
  let more = false;
  for (const { key, value } of entries) {
    if (limit && items.length === limit) {
      more = true;
      break;
    }
    if (filter && !filter(value)) continue;
    items.push({ key, object: value, revision: revisionOf(value) });
  }

  const result: ListResult = { items, revision: request.revision };
  const lastKey = items.at(-1)?.key;
  if (more && lastKey !== undefined) {
    result.continue = encodeContinue({ revision: request.revision, afterKey: lastKey });
    // Exact and cheap only for an unfiltered read of the current state: a count of the remaining keys.
    if (!filter && !rewinding) {
      result.remainingItemCount = dbs.objects.getKeysCount({ start: lastKey, exclusiveStart: true, end: prefixEnd(prefix), transaction });
    }
  }
  return result;
}

function* cachedEntries(dbs: StoreDatabases, transaction: Transaction, range: object, cache: ObjectCache): Generator<Entry> {
  for (const key of dbs.objects.getKeys(range)) {
    const cached = cache.get(key);
    if (cached) {
      yield { key, value: cached };
      continue;
    }
    const value = dbs.codec.fromDisk(key, dbs.objects.get(key, { transaction }));
    if (value) yield { key, value: cache.remember(key, value) };
  }
}

function* openedEntries(dbs: StoreDatabases, range: object): Generator<Entry> {
  for (const { key, value } of dbs.objects.getRange(range)) yield { key, value: dbs.codec.fromDisk(key, value) };
}

/**
 * For each key in the requested range changed after `revision`: its state at `revision` (undefined
 * if it did not exist then). The first log entry after `revision` for a key holds that state as
 * its `prevObject`.
 */
function statesAt(dbs: StoreDatabases, transaction: Transaction, request: SnapshotListRequest): Map<string, KubeObject | undefined> {
  const states = new Map<string, KubeObject | undefined>();
  for (const { value: record } of dbs.events.getRange({ start: request.revision, exclusiveStart: true, transaction })) {
    if (states.has(record.key) || !record.key.startsWith(request.prefix)) continue;
    if (request.afterKey !== undefined && compareKeys(record.key, request.afterKey) <= 0) continue;
    states.set(record.key, record.prevObject && dbs.codec.fromDisk(record.key, record.prevObject));
  }
  return states;
}

/** Merges the current entries with the older states of the keys changed since, in key order. */
function* rewind(current: Iterable<Entry>, olderStates: Map<string, KubeObject | undefined>): Generator<Entry> {
  const changedKeys = [...olderStates.keys()].sort(compareKeys);
  let next = 0;
  function* olderUpTo(key: string | undefined): Generator<Entry> {
    while (next < changedKeys.length && (key === undefined || compareKeys(changedKeys[next]!, key) < 0)) {
      const changedKey = changedKeys[next++]!;
      const value = olderStates.get(changedKey);
      if (value) yield { key: changedKey, value };
    }
  }
  for (const entry of current) {
    yield* olderUpTo(entry.key);
    // A changed key's older state comes from `olderStates` (yielded in order by olderUpTo).
    if (!olderStates.has(entry.key)) yield entry;
  }
  yield* olderUpTo(undefined);
}
