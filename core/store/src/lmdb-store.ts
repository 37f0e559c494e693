import { isDeepStrictEqual } from 'node:util';
import { cloneJsonValue, NestingTooDeepError, type KubeObject } from '@skiff/api';
import type { Logger } from '@skiff/kernel';
import { openDatabases, type StoreDatabases } from './databases.js';
import { commitCause, commitFailureError, freeBytes, isCommitFailure } from './commit-failure.js';
import { CodedStoreError, StoreUsageError } from './errors.js';
import { readLogChunk, readRevisions, revisionOf, type LogChunk } from './event-log.js';
import { FanOut } from './fan-out.js';
import { assertValidKey } from './keys.js';
import { decodeContinue } from './continue-token.js';
import { listAtRevision } from './list-snapshot.js';
import { ObjectCache } from './object-cache.js';
import { resolveStoreOptions, type LmdbStoreOptions, type ResolvedStoreOptions } from './options.js';
import { Watcher } from './watcher.js';
import { CommitAnnouncements, serveWrites, WriteRelay } from './cross-thread.js';
import type { MessagePort } from 'node:worker_threads';
import { StoreError } from './types.js';
import type { ListOptions, ListResult, Store, StoreEvent, StoredObject } from './types.js';

/** How many log entries a watcher reads per snapshot while catching up. */
const WATCH_LOG_CHUNK = 256;
/** How many log entries one compaction transaction drops, so no single write transaction runs long. */
const COMPACTION_BATCH = 2_000;
/**
 * The deepest object the store accepts. msgpack encodes recursively and overflows the stack at about
 * 1,200 levels; an event nests its object one level deeper. The API server refuses request bodies far
 * shallower than this (MAX_NESTING_DEPTH), so only a buggy in-process caller ever meets this limit.
 */
const MAX_STORED_DEPTH = 512;
/** Decoded objects kept for lists (upstream keeps the whole current state in its watch cache). */
const OBJECT_CACHE_ENTRIES = 10_000;
/** A store shared by threads reads the log this often even when no commit was announced (compaction moves too). */
const CROSS_THREAD_POLL_MS = 1_000;

/** What a write transaction callback produces: the caller's result, and the event to publish once committed. */
interface WriteOutcome<T> {
  result: T;
  event?: StoreEvent;
}

function stored(key: string, object: KubeObject): StoredObject {
  return { key, object, revision: revisionOf(object) };
}

function assertWholeNumber(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new StoreUsageError('SKIFF_ERR_STORE_ARGUMENT_INVALID', { name, detail: `expected a whole number >= 0, got ${value}` });
}

/**
 * The Store contract on LMDB: objects, an event log keyed by revision, and the revision counters
 * live in one LMDB environment, and every write updates all three in one durable transaction.
 */
export class LmdbStore implements Store {
  private readonly dbs: StoreDatabases;
  private readonly options: ResolvedStoreOptions;
  private readonly logger: Logger | undefined;
  private readonly fanOut = new FanOut();
  /** Decoded objects of committed writes, for lists of the current state. */
  private readonly objectCache = new ObjectCache(OBJECT_CACHE_ENTRIES);
  /** The last revision whose commit has been acknowledged (and published to watchers). */
  private lastRevision: number;
  private compacted: number;
  private compactionTimer: NodeJS.Timeout | undefined;
  private compacting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  /** When commits started failing (a full disk), until one succeeds again. */
  private failingSince: number | undefined;
  /** Set when several threads share this store: where commits are announced to the others. */
  private readonly announcements: CommitAnnouncements | undefined;
  /** A worker thread's writes go to the primary thread's store. */
  private readonly relay: WriteRelay | undefined;
  private stopFollowing: (() => void) | undefined;

  constructor(options: LmdbStoreOptions) {
    this.options = resolveStoreOptions(options);
    this.logger = this.options.logger;
    this.dbs = openDatabases(this.options.path, this.options.sealer);
    const revisions = readRevisions(this.dbs);
    this.lastRevision = revisions.revision;
    this.compacted = revisions.compactedRevision;
    if (this.options.threads) {
      this.announcements = new CommitAnnouncements(this.options.threads.announce);
      if (this.options.threads.primary) {
        // A worker thread: the primary makes its writes, and it reads everyone's from the log.
        this.relay = new WriteRelay(this.options.threads.primary);
        this.stopFollowing = this.announcements.follow(() => this.catchUpWithOtherThreads(true), CROSS_THREAD_POLL_MS);
      } else {
        // The primary writes for every thread: its watchers get its events as it commits them, as a single thread's do.
        this.announcements.announce(this.lastRevision);
      }
    }
    if (this.options.compactionIntervalMs > 0) {
      this.compactionTimer = setInterval(() => this.compactOldRevisions(), this.options.compactionIntervalMs);
      this.compactionTimer.unref();
    }
  }

  revision(): number {
    if (!this.closing) this.seeOtherThreadsCommits();
    return this.lastRevision;
  }

  compactedRevision(): number {
    return this.compacted;
  }

  async get(key: string): Promise<StoredObject | undefined> {
    this.assertOpen();
    assertValidKey(key);
    this.seeOtherThreadsCommits();
    const object = this.dbs.codec.fromDisk(key, this.dbs.objects.get(key));
    return object && stored(key, object);
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    this.assertOpen();
    const { limit, filter } = options;
    if (limit !== undefined) assertWholeNumber('limit', limit);
    if (options.revision !== undefined) assertWholeNumber('revision', options.revision);
    const position = options.continue !== undefined ? decodeContinue(options.continue, prefix) : undefined;
    this.seeOtherThreadsCommits();
    const transaction = this.dbs.root.useReadTransaction();
    try {
      const { revision: snapshotRevision, compactedRevision } = readRevisions(this.dbs, transaction);
      // Cached objects are those of `lastRevision`: the primary's newer commits first evict what they changed.
      if (this.relay && snapshotRevision > this.lastRevision) this.catchUpWithOtherThreads(false);
      const revision = position?.revision ?? options.revision ?? snapshotRevision;
      if (revision > snapshotRevision) {
        if (position)
          throw new CodedStoreError('SKIFF_ERR_STORE_CONTINUE_INVALID', { detail: `revision ${revision} is newer than the store (${snapshotRevision})` });
        throw new StoreUsageError('SKIFF_ERR_STORE_ARGUMENT_INVALID', {
          name: 'revision',
          detail: `${revision} is newer than the store (${snapshotRevision})`,
        });
      }
      if (revision < compactedRevision) throw new CodedStoreError('SKIFF_ERR_STORE_COMPACTED', { revision, compacted: compactedRevision });
      return listAtRevision(this.dbs, transaction, { prefix, revision, snapshotRevision, afterKey: position?.afterKey, limit, filter }, this.objectCache);
    } finally {
      transaction.done();
    }
  }

  async create(key: string, object: KubeObject): Promise<StoredObject> {
    const next = storable(key, object);
    if (this.relay) return this.relayed(key, (relay) => relay.create(key, next));
    return this.write(key, () => {
      if (this.dbs.objects.doesExist(key)) throw new CodedStoreError('SKIFF_ERR_STORE_EXISTS', { key }, key);
      return this.record(key, 'ADDED', next);
    });
  }

  async update(key: string, object: KubeObject, options: { expectedRevision?: number } = {}): Promise<StoredObject> {
    const next = storable(key, object);
    if (this.relay) return this.relayed(key, (relay) => relay.update(key, next, options));
    return this.write(key, () => {
      const current = this.existing(key, options.expectedRevision);
      return this.record(key, 'MODIFIED', next, current);
    });
  }

  async delete(key: string, options: { expectedRevision?: number } = {}): Promise<StoredObject> {
    if (this.relay) return this.relayed(key, (relay) => relay.delete(key, options));
    return this.write(key, () => {
      const current = this.existing(key, options.expectedRevision);
      return this.record(key, 'DELETED', cloneJsonValue(current), current);
    });
  }

  /**
   * Runs `fn` inside the write transaction, so it is called exactly once and nothing interleaves.
   * If `fn` returns an object equal to the current one (resourceVersion aside), nothing is written
   * and the current object is returned, as Kubernetes' GuaranteedUpdate does.
   */
  async guaranteedUpdate(key: string, fn: (current: StoredObject | undefined) => KubeObject | undefined): Promise<StoredObject | undefined> {
    if (this.relay) return this.relayedGuaranteedUpdate(key, fn);
    return this.write(key, (): WriteOutcome<StoredObject | undefined> => {
      const current = this.dbs.codec.fromDisk(key, this.dbs.objects.get(key));
      const proposed = fn(current && stored(key, current));
      // `fn` may have changed the object it was given, so compare against a fresh read.
      const pristine = current && this.dbs.codec.fromDisk(key, this.dbs.objects.get(key)!);
      if (proposed === undefined) return { result: pristine && stored(key, pristine) };
      const next = storable(key, proposed);
      if (!pristine) return this.record(key, 'ADDED', next);
      next.metadata = { ...{}, ...next.metadata, resourceVersion: pristine.metadata.resourceVersion };
      if (isDeepStrictEqual(next, pristine)) return { result: stored(key, pristine) };
      return this.record(key, 'MODIFIED', next, pristine);
    });
  }

  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<StoreEvent> {
    this.assertOpen();
    assertWholeNumber('fromRevision', fromRevision);
    if (fromRevision < this.compacted) throw new CodedStoreError('SKIFF_ERR_STORE_COMPACTED', { revision: fromRevision, compacted: this.compacted });
    return new Watcher({
      prefix,
      fromRevision,
      signal,
      bufferSize: this.options.watchBufferSize,
      readLog: (watchPrefix, afterRevision) => this.readLogForWatch(watchPrefix, afterRevision),
      fanOut: this.fanOut,
    });
  }

  async compact(revision: number): Promise<void> {
    this.assertOpen();
    assertWholeNumber('revision', revision);
    const target = Math.min(revision, this.lastRevision);
    while (this.compacted < target) {
      this.compacted = await this.compactBatch(target);
    }
  }

  private async compactBatch(target: number): Promise<number> {
    try {
      return await this.dbs.root.transaction(() => {
        const from = readRevisions(this.dbs).compactedRevision;
        const upTo = Math.min(target, from + COMPACTION_BATCH);
        if (upTo <= from) return from;
        // The log is dense (one entry per revision), so the entries to drop are exactly from+1..upTo.
        for (let dropped = from + 1; dropped <= upTo; dropped++) this.dbs.events.remove(dropped);
        this.dbs.meta.put('compactedRevision', upTo);
        return upTo;
      });
    } catch (error) {
      throw await this.commitError(error);
    }
  }

  /**
   * Writes again, in place, every value not in the form the sealer would write now: objects and event-log entries
   * stored in plain text before encryption was configured, or sealed with a key that is no longer the first.
   * Revisions do not change (clients see nothing); run at start, before the API server serves. Returns how many
   * values were rewritten.
   */
  async resealStale(): Promise<{ objects: number; events: number }> {
    this.assertOpen();
    const { codec } = this.dbs;
    const staleKeys = [...this.dbs.objects.getRange({})].filter(({ key, value }) => codec.isStale(key, value)).map(({ key }) => key);
    const staleRevisions = [...this.dbs.events.getRange({})]
      .filter(({ value }) => codec.isStale(value.key, value.object) || (value.prevObject !== undefined && codec.isStale(value.key, value.prevObject)))
      .map(({ key }) => key);
    for (let start = 0; start < staleKeys.length; start += COMPACTION_BATCH) {
      const batch = staleKeys.slice(start, start + COMPACTION_BATCH);
      await this.dbs.root.transaction(() => {
        for (const key of batch) {
          const value = this.dbs.objects.get(key);
          if (value) this.dbs.objects.put(key, codec.toDisk(key, codec.fromDisk(key, value)));
        }
      });
    }
    for (let start = 0; start < staleRevisions.length; start += COMPACTION_BATCH) {
      const batch = staleRevisions.slice(start, start + COMPACTION_BATCH);
      await this.dbs.root.transaction(() => {
        for (const revision of batch) {
          const record = this.dbs.events.get(revision);
          if (record) this.dbs.events.put(revision, codec.recordToDisk(codec.recordFromDisk(record)));
        }
      });
    }
    return { objects: staleKeys.length, events: staleRevisions.length };
  }

  async close(): Promise<void> {
    if (!this.closing) {
      clearInterval(this.compactionTimer);
      this.stopFollowing?.();
      this.fanOut.endAll(new CodedStoreError('SKIFF_ERR_STORE_CLOSED'));
      this.closing = this.dbs.root.close();
    }
    await this.closing;
  }

  /**
   * Runs `change` as one callback of the next LMDB write transaction and resolves once that
   * transaction has durably committed. `change` must do all its checks before its first write: a
   * callback that throws is skipped, but the rest of the batch it shares a transaction with commits.
   * Callers copy their input before calling: the transaction runs later, and the caller may change
   * its object in the meantime.
   */
  private async write<T>(key: string, change: () => WriteOutcome<T>): Promise<T> {
    this.assertOpen();
    assertValidKey(key);
    let staged: StoreEvent | undefined;
    let result: T;
    this.objectCache.writeStarted(key);
    try {
      result = await this.dbs.root.transaction(() => {
        const outcome = change();
        staged = outcome.event;
        if (staged) this.fanOut.stage(staged);
        return outcome.result;
      });
    } catch (error) {
      this.objectCache.writeEnded(key);
      // Before any await: a later transaction's commit must not find this event still staged.
      if (staged) this.fanOut.discard(staged);
      throw await this.commitError(error);
    }
    // The next list reads the written object from LMDB and caches it: writes pay nothing for the cache.
    this.objectCache.writeEnded(key);
    if (staged) {
      this.fanOut.committed(staged);
      this.lastRevision = Math.max(this.lastRevision, staged.revision);
      // The other threads read it from the log.
      this.announcements?.announce(this.lastRevision);
    }
    this.commitSucceeded();
    return result;
  }

  /**
   * Writes one change at the next revision, inside the current write transaction, all or nothing.
   * lmdb-js does not roll back the puts of a transaction callback that throws (the rest of its batch
   * commits), so the event goes first: it holds the object, so it is the value that would fail to
   * encode. Should a later put fail anyway, the earlier ones are undone before the error goes on, and
   * the revision counter, written last, is never advanced for a change that did not happen.
   */
  private record(key: string, type: StoreEvent['type'], object: KubeObject, prevObject?: KubeObject): WriteOutcome<StoredObject> {
    const revision = (this.dbs.meta.get('revision') ?? 0) + 1;
    object.metadata = { ...{}, ...object.metadata, resourceVersion: String(revision) };
    const event: StoreEvent = prevObject ? { type, key, revision, object, prevObject } : { type, key, revision, object };
    const { codec } = this.dbs;
    this.dbs.events.put(revision, codec.recordToDisk(prevObject ? { type, key, object, prevObject } : { type, key, object }));
    try {
      if (type === 'DELETED') this.dbs.objects.remove(key);
      else this.dbs.objects.put(key, codec.toDisk(key, object));
      this.dbs.meta.put('revision', revision);
    } catch (error) {
      this.dbs.events.remove(revision);
      if (prevObject) this.dbs.objects.put(key, codec.toDisk(key, prevObject));
      else this.dbs.objects.remove(key);
      throw error;
    }
    return { result: { key, object, revision }, event };
  }

  /** The object at `key` inside the write transaction, checked against the caller's expected revision. */
  private existing(key: string, expectedRevision: number | undefined): KubeObject {
    const current = this.dbs.codec.fromDisk(key, this.dbs.objects.get(key));
    if (!current) throw new CodedStoreError('SKIFF_ERR_STORE_NOT_FOUND', { key }, key);
    const actual = revisionOf(current);
    if (expectedRevision !== undefined && expectedRevision !== actual)
      throw new CodedStoreError('SKIFF_ERR_STORE_CONFLICT', { key, actual, expected: expectedRevision }, key);
    return current;
  }

  /** On the primary thread: makes the writes of a worker thread's store, sent on `port` (see LmdbStoreOptions.threads). */
  serveThread(port: MessagePort): void {
    serveWrites(port, this);
  }

  /** A worker thread's write, made by the primary thread; once it answers, this thread reads and publishes it. */
  private async relayed(key: string, send: (relay: WriteRelay) => Promise<StoredObject>): Promise<StoredObject> {
    this.assertOpen();
    assertValidKey(key);
    this.objectCache.writeStarted(key);
    try {
      return await send(this.relay!);
    } finally {
      this.objectCache.writeEnded(key);
      this.catchUpWithOtherThreads(true);
    }
  }

  /**
   * guaranteedUpdate on a worker thread: read, apply `fn`, then write only if the key is still at the revision read,
   * and on a conflict start again (as on etcd, `fn` may run more than once).
   */
  private async relayedGuaranteedUpdate(key: string, fn: (current: StoredObject | undefined) => KubeObject | undefined): Promise<StoredObject | undefined> {
    for (;;) {
      this.catchUpWithOtherThreads(true);
      const current = await this.get(key);
      const proposed = fn(current && { ...{}, ...current, object: cloneJsonValue(current.object) });
      if (proposed === undefined) return current;
      const next = storable(key, proposed);
      try {
        if (!current) return await this.relayed(key, (relay) => relay.create(key, next));
        next.metadata = { ...{}, ...next.metadata, resourceVersion: current.object.metadata.resourceVersion };
        if (isDeepStrictEqual(next, current.object)) return current;
        return await this.relayed(key, (relay) => relay.update(key, next, { expectedRevision: current.revision }));
      } catch (err) {
        if (err instanceof StoreError && (err.kind === 'Conflict' || err.kind === 'Exists' || err.kind === 'NotFound')) continue;
        throw err;
      }
    }
  }

  /** Before a read on a worker thread: when the primary has announced a newer commit, reads with a snapshot that has it. */
  private seeOtherThreadsCommits(): void {
    if (this.relay && this.announcements!.latest() > this.lastRevision) this.catchUpWithOtherThreads(true);
  }

  /**
   * A worker thread's store: publishes, in revision order, every event the primary committed after `lastRevision`,
   * evicting the cached objects they changed. `fresh` renews this thread's read snapshot first (lmdb-js
   * renews it once per event-loop turn, and knows nothing of other threads' commits).
   */
  private catchUpWithOtherThreads(fresh: boolean): void {
    if (this.closing || !this.relay) return;
    if (fresh) this.dbs.root.resetReadTxn();
    const transaction = this.dbs.root.useReadTransaction();
    try {
      const { revision, compactedRevision } = readRevisions(this.dbs, transaction);
      this.compacted = Math.max(this.compacted, compactedRevision);
      if (this.lastRevision < compactedRevision) {
        // Only if this thread stalled longer than the log is kept: its watchers cannot be told what they missed.
        this.fanOut.endAll(new CodedStoreError('SKIFF_ERR_STORE_COMPACTED', { revision: this.lastRevision, compacted: compactedRevision }));
        this.objectCache.clear();
        this.lastRevision = revision;
        return;
      }
      // No watcher to tell and no cached object to evict: nothing to read.
      if (!this.fanOut.listened && this.objectCache.size === 0) this.lastRevision = Math.max(this.lastRevision, revision);
      while (this.lastRevision < revision) {
        const chunk = readLogChunk(this.dbs, transaction, '', this.lastRevision, WATCH_LOG_CHUNK);
        for (const event of chunk.events) {
          this.objectCache.evict(event.key);
          this.fanOut.publish(event);
        }
        if (chunk.scannedThrough <= this.lastRevision) break;
        this.lastRevision = chunk.scannedThrough;
      }
    } finally {
      transaction.done();
    }
  }

  private readLogForWatch(prefix: string, afterRevision: number): LogChunk {
    this.assertOpen();
    const transaction = this.dbs.root.useReadTransaction();
    try {
      const { compactedRevision } = readRevisions(this.dbs, transaction);
      if (afterRevision < compactedRevision) throw new CodedStoreError('SKIFF_ERR_STORE_COMPACTED', { revision: afterRevision, compacted: compactedRevision });
      return readLogChunk(this.dbs, transaction, prefix, afterRevision, WATCH_LOG_CHUNK);
    } finally {
      transaction.done();
    }
  }

  /**
   * A failed LMDB commit as the StoreError that says why (a full disk is NoSpace); any other error as it is.
   * Nothing of the transaction was written and LMDB needs no reset: the next write simply tries again. The
   * first failure of a run is logged as an error, the ones after it only at debug level, so that clients
   * retrying against a full disk do not flood the log.
   */
  private async commitError(error: unknown): Promise<unknown> {
    if (!isCommitFailure(error)) return error;
    const cause = await commitCause(error);
    const failure = commitFailureError(cause, this.options.path);
    const details = { err: cause, code: failure.code, path: this.options.path, freeBytes: freeBytes(this.options.path) };
    if (this.failingSince === undefined) {
      this.failingSince = Date.now();
      this.logger?.error(details, `store commit failed, nothing written: ${failure.message}`);
    } else {
      this.logger?.debug(details, 'store commit failed again');
    }
    return failure;
  }

  private commitSucceeded(): void {
    if (this.failingSince === undefined) return;
    this.logger?.info({ failedForMs: Date.now() - this.failingSince }, 'store commits succeed again');
    this.failingSince = undefined;
  }

  private compactOldRevisions(): void {
    const target = this.lastRevision - this.options.retainRevisions;
    if (this.compacting || target <= this.compacted) return;
    this.compacting = this.compact(target)
      .catch((error: unknown) => {
        if (!this.closing) this.logger?.error({ err: error, target }, 'periodic store compaction failed');
      })
      .finally(() => (this.compacting = undefined));
  }

  private assertOpen(): void {
    if (this.closing) throw new CodedStoreError('SKIFF_ERR_STORE_CLOSED');
  }
}

/**
 * A private copy of `object` that the store can encode: refused, before any transaction, when it nests
 * deeper than the store can encode, so a write either happens whole or fails before it starts.
 */
function storable(key: string, object: KubeObject): KubeObject {
  try {
    return cloneJsonValue(object, MAX_STORED_DEPTH);
  } catch (err) {
    if (!(err instanceof NestingTooDeepError)) throw err;
    throw new StoreUsageError('SKIFF_ERR_STORE_VALUE_INVALID', { key: JSON.stringify(key), detail: `it nests deeper than ${MAX_STORED_DEPTH} levels` });
  }
}

/** Opens (or creates) an LMDB store in `options.path`. */
export async function openLmdbStore(options: LmdbStoreOptions): Promise<LmdbStore> {
  return new LmdbStore(options);
}
