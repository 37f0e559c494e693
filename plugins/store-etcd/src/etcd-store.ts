import { isDeepStrictEqual } from 'node:util';
import { cloneJsonValue, type KubeObject } from '@skiff/api';
import type { Logger } from '@skiff/kernel';
import { CodedStoreError, StoreError, StoreUsageError, type ListOptions, type ListResult, type Store, type StoreEvent, type StoredObject } from '@skiff/store';
import { EtcdCodec } from './codec.js';
import { EtcdClient, type Compare, type KeyValue, type RangeResponse, type TxnResponse } from './etcd-client.js';
import { decodeContinue, encodeContinue } from './continue-token.js';
import { EtcdStoreError } from './errors.js';
import { WatchHub } from './watch-hub.js';
import { resolveEtcdStoreOptions, type EtcdStoreOptions, type ResolvedEtcdStoreOptions } from './options.js';

/** The key the compactors of every API server on one etcd agree through (as upstream's `compact_rev_key`). */
const COMPACT_KEY = 'compact_rev_key';
/** How many keys one Range of a filtered list reads at a time. */
const FILTERED_PAGE = 500;

function assertWholeNumber(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new StoreUsageError('SKIFF_ERR_STORE_ARGUMENT_INVALID', { name, detail: `expected a whole number >= 0, got ${value}` });
}

function assertValidKey(key: string): void {
  if (typeof key !== 'string' || key === '')
    throw new StoreUsageError('SKIFF_ERR_STORE_KEY_INVALID', { key: JSON.stringify(key), detail: 'expected a non-empty string' });
}

/** etcd's answer to a read or watch at a revision it no longer holds, or does not hold yet. */
function compactedOrFuture(err: unknown): 'compacted' | 'future' | undefined {
  const text = (err as { details?: string; message?: string })?.details ?? (err as Error)?.message ?? '';
  if (text.includes('required revision has been compacted')) return 'compacted';
  if (text.includes('required revision is a future revision')) return 'future';
  return undefined;
}

/**
 * The store contract over etcd v3. A key's mod_revision is its resourceVersion, writes are transactions whose
 * compares carry the preconditions, lists are Range calls at one revision (continue tokens keep it), and watches are
 * served from one etcd watch of the whole prefix (`WatchHub`) or, from a revision older than the hub remembers, from
 * their own etcd watch. Several stores (API servers) may share one etcd: each sees the others' writes through its
 * hub, so `revision()` follows the cluster's writes within a round trip.
 */
export class EtcdStore implements Store {
  /** Several API servers may share one etcd. */
  readonly shared = true;
  private readonly options: ResolvedEtcdStoreOptions;
  private readonly client: EtcdClient;
  private readonly codec: EtcdCodec;
  private readonly logger: Logger | undefined;
  private hub!: WatchHub;
  private lastRevision = 0;
  private compacted = 0;
  private compactionTimer: NodeJS.Timeout | undefined;
  /** The revision seen at the previous compaction interval: the next compaction goes up to it. */
  private compactCandidate = 0;
  private compactKeyVersion = 0;
  private closed = false;

  private constructor(options: EtcdStoreOptions) {
    this.options = resolveEtcdStoreOptions(options);
    this.logger = this.options.logger;
    this.client = new EtcdClient({
      endpoints: this.options.endpoints,
      tls: this.options.tls,
      callTimeoutMs: this.options.callTimeoutMs,
      retryForMs: this.options.retryForMs,
    });
    this.codec = new EtcdCodec(this.options.keyPrefix, this.options.maxValueBytes, this.options.sealer);
  }

  static async open(options: EtcdStoreOptions): Promise<EtcdStore> {
    const store = new EtcdStore(options);
    try {
      await store.start();
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }

  private async start(): Promise<void> {
    let answer: RangeResponse;
    try {
      answer = await this.client.range({ key: this.codec.key('/'), range_end: this.codec.rangeEnd('/'), count_only: true });
    } catch (err) {
      throw new EtcdStoreError('SKIFF_ERR_ETCD_UNREACHABLE', { endpoints: this.options.endpoints.join(', '), detail: (err as Error).message });
    }
    this.seen(answer.header.revision);
    this.hub = new WatchHub({
      client: this.client,
      codec: this.codec,
      startRevision: this.lastRevision,
      bufferSize: this.options.watchCacheSize,
      progressIntervalMs: this.options.progressIntervalMs,
      retryForMs: this.options.retryForMs,
      logger: this.logger,
      onRevision: (revision) => this.seen(revision),
      onCompacted: (revision) => (this.compacted = Math.max(this.compacted, revision)),
    });
    await this.hub.start();
    if (this.options.compactionIntervalMs > 0) {
      this.compactCandidate = this.lastRevision;
      this.compactionTimer = setInterval(() => void this.compactOldRevisions(), this.options.compactionIntervalMs);
      this.compactionTimer.unref();
    }
  }

  revision(): number {
    return this.lastRevision;
  }

  compactedRevision(): number {
    return this.compacted;
  }

  async get(key: string): Promise<StoredObject | undefined> {
    this.assertOpen();
    assertValidKey(key);
    const answer = await this.client.range({ key: this.codec.key(key) });
    this.seen(answer.header.revision);
    const kv = answer.kvs[0];
    return kv && this.codec.stored(kv);
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    this.assertOpen();
    const { limit, filter } = options;
    if (limit !== undefined) assertWholeNumber('limit', limit);
    if (options.revision !== undefined) assertWholeNumber('revision', options.revision);
    const position = options.continue !== undefined ? decodeContinue(options.continue, prefix) : undefined;
    let revision = position?.revision ?? options.revision ?? 0;
    if (revision > 0 && revision < this.compacted) throw new CodedStoreError('SKIFF_ERR_STORE_COMPACTED', { revision, compacted: this.compacted });
    const end = this.codec.rangeEnd(prefix);
    let from = position ? Buffer.concat([this.codec.key(position.afterKey), Buffer.from([0])]) : this.codec.key(prefix);
    const items: StoredObject[] = [];
    const wanted = limit && limit > 0 ? limit : Infinity;
    let more = false;
    let remaining: number | undefined;
    for (;;) {
      const pageLimit = filter ? (wanted === Infinity ? 0 : Math.max(FILTERED_PAGE, wanted - items.length)) : wanted === Infinity ? 0 : wanted;
      const answer = await this.range(from, end, pageLimit, revision, position !== undefined);
      revision ||= answer.header.revision;
      for (const kv of answer.kvs) {
        if (items.length >= wanted) {
          more = true;
          break;
        }
        const item = this.codec.stored(kv);
        if (!filter || filter(item.object)) items.push(item);
      }
      if (!filter) {
        more = answer.more;
        if (more) remaining = answer.count - answer.kvs.length;
        break;
      }
      if (more || !answer.more || answer.kvs.length === 0) {
        more ||= items.length >= wanted && answer.more;
        break;
      }
      from = Buffer.concat([answer.kvs[answer.kvs.length - 1]!.key, Buffer.from([0])]);
    }
    const result: ListResult = { items, revision };
    if (more && items.length > 0) {
      result.continue = encodeContinue({ revision, afterKey: items[items.length - 1]!.key });
      if (remaining !== undefined) result.remainingItemCount = remaining;
    }
    return result;
  }

  async create(key: string, object: KubeObject): Promise<StoredObject> {
    this.assertOpen();
    assertValidKey(key);
    const etcdKey = this.codec.key(key);
    const value = this.codec.encode(key, object);
    const answer = await this.txn({
      compare: [{ result: 'EQUAL', target: 'CREATE', key: etcdKey, create_revision: 0 }],
      success: [{ request_put: { key: etcdKey, value } }],
      failure: [],
    });
    if (!answer.succeeded) throw new CodedStoreError('SKIFF_ERR_STORE_EXISTS', { key }, key);
    return { key, object: this.codec.decode(key, value, answer.header.revision), revision: answer.header.revision };
  }

  async update(key: string, object: KubeObject, options: { expectedRevision?: number } = {}): Promise<StoredObject> {
    this.assertOpen();
    assertValidKey(key);
    const etcdKey = this.codec.key(key);
    const value = this.codec.encode(key, object);
    const answer = await this.txn({
      compare: [this.precondition(etcdKey, options.expectedRevision)],
      success: [{ request_put: { key: etcdKey, value } }],
      failure: [{ request_range: { key: etcdKey } }],
    });
    if (!answer.succeeded) this.preconditionFailed(key, answer, options.expectedRevision);
    return { key, object: this.codec.decode(key, value, answer.header.revision), revision: answer.header.revision };
  }

  async delete(key: string, options: { expectedRevision?: number } = {}): Promise<StoredObject> {
    this.assertOpen();
    assertValidKey(key);
    const etcdKey = this.codec.key(key);
    const answer = await this.txn({
      compare: [this.precondition(etcdKey, options.expectedRevision)],
      success: [{ request_delete_range: { key: etcdKey, prev_kv: true } }],
      failure: [{ request_range: { key: etcdKey } }],
    });
    if (!answer.succeeded) this.preconditionFailed(key, answer, options.expectedRevision);
    const previous = answer.responses[0]?.response_delete_range?.prev_kvs[0];
    // Deleted between the compare and the delete cannot happen in one transaction; a missing prev_kv is etcd's bug.
    if (!previous) throw new CodedStoreError('SKIFF_ERR_STORE_NOT_FOUND', { key }, key);
    // As the event: the last state, at the revision of its deletion.
    return { key, object: this.codec.decode(key, previous.value, answer.header.revision), revision: answer.header.revision };
  }

  /**
   * Read, `fn`, then a transaction that writes only if the key is still at the revision read; when another write came
   * first, `fn` runs again on what it wrote. So `fn` may run more than once (as in upstream's GuaranteedUpdate), and
   * no write is lost. An answer equal to the current object (resourceVersion aside) writes nothing.
   */
  async guaranteedUpdate(key: string, fn: (current: StoredObject | undefined) => KubeObject | undefined): Promise<StoredObject | undefined> {
    this.assertOpen();
    assertValidKey(key);
    const etcdKey = this.codec.key(key);
    let currentKv: KeyValue | undefined = (await this.client.range({ key: etcdKey })).kvs[0];
    for (;;) {
      const current = currentKv && this.codec.stored(currentKv);
      const proposed = fn(current);
      const pristine = currentKv && this.codec.stored(currentKv);
      if (proposed === undefined) return pristine;
      const value = this.codec.encode(key, proposed);
      if (pristine) {
        const next = cloneJsonValue(proposed);
        next.metadata = { ...{}, ...next.metadata, resourceVersion: pristine.object.metadata.resourceVersion };
        if (isDeepStrictEqual(next, pristine.object)) return pristine;
      }
      const compare: Compare = currentKv
        ? { result: 'EQUAL', target: 'MOD', key: etcdKey, mod_revision: currentKv.mod_revision }
        : { result: 'EQUAL', target: 'CREATE', key: etcdKey, create_revision: 0 };
      const answer = await this.txn({
        compare: [compare],
        success: [{ request_put: { key: etcdKey, value } }],
        failure: [{ request_range: { key: etcdKey } }],
      });
      if (answer.succeeded) return { key, object: this.codec.decode(key, value, answer.header.revision), revision: answer.header.revision };
      currentKv = answer.responses[0]?.response_range?.kvs[0];
    }
  }

  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<StoreEvent> {
    this.assertOpen();
    assertWholeNumber('fromRevision', fromRevision);
    if (fromRevision < this.compacted) throw new CodedStoreError('SKIFF_ERR_STORE_COMPACTED', { revision: fromRevision, compacted: this.compacted });
    return this.hub.watch(prefix, fromRevision, signal);
  }

  async compact(revision: number): Promise<void> {
    this.assertOpen();
    assertWholeNumber('revision', revision);
    const target = Math.min(revision, this.lastRevision);
    if (target <= this.compacted) return;
    try {
      const answer = await this.client.compact(target);
      this.seen(answer.header.revision);
    } catch (err) {
      // Another API server compacted past it already.
      if (compactedOrFuture(err) !== 'compacted') throw err;
    }
    this.compacted = Math.max(this.compacted, target);
    this.hub.compacted(target);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.compactionTimer);
    this.hub?.close(new CodedStoreError('SKIFF_ERR_STORE_CLOSED'));
    this.client.close();
  }

  /** Every revision an answer carries: the store's revision follows the cluster. */
  private seen(revision: number): void {
    if (revision > this.lastRevision) this.lastRevision = revision;
  }

  private precondition(etcdKey: Buffer, expectedRevision: number | undefined): Compare {
    return expectedRevision === undefined
      ? { result: 'GREATER', target: 'VERSION', key: etcdKey, version: 0 }
      : { result: 'EQUAL', target: 'MOD', key: etcdKey, mod_revision: expectedRevision };
  }

  private preconditionFailed(key: string, answer: TxnResponse, expectedRevision: number | undefined): never {
    const current = answer.responses[0]?.response_range?.kvs[0];
    if (!current) throw new CodedStoreError('SKIFF_ERR_STORE_NOT_FOUND', { key }, key);
    throw new CodedStoreError('SKIFF_ERR_STORE_CONFLICT', { key, actual: current.mod_revision, expected: expectedRevision ?? 'any' }, key);
  }

  private async txn(request: Parameters<EtcdClient['txn']>[0]): Promise<TxnResponse> {
    let answer: TxnResponse;
    try {
      answer = await this.client.txn(request);
    } catch (err) {
      throw this.translate(err);
    }
    this.seen(answer.header.revision);
    return answer;
  }

  private async range(from: Buffer, end: Buffer, limit: number, revision: number, continuing: boolean): Promise<RangeResponse> {
    let answer: RangeResponse;
    try {
      answer = await this.client.range({ key: from, range_end: end, limit, revision });
    } catch (err) {
      const reason = compactedOrFuture(err);
      if (reason === 'compacted') {
        this.compacted = Math.max(this.compacted, revision);
        throw new CodedStoreError('SKIFF_ERR_STORE_COMPACTED', { revision, compacted: this.compacted });
      }
      if (reason === 'future') {
        if (continuing)
          throw new CodedStoreError('SKIFF_ERR_STORE_CONTINUE_INVALID', { detail: `revision ${revision} is newer than the store (${this.lastRevision})` });
        throw new StoreUsageError('SKIFF_ERR_STORE_ARGUMENT_INVALID', {
          name: 'revision',
          detail: `${revision} is newer than the store (${this.lastRevision})`,
        });
      }
      throw this.translate(err);
    }
    this.seen(answer.header.revision);
    return answer;
  }

  /** etcd's "database space exceeded" is the contract's NoSpace; anything else goes on as it is. */
  private translate(err: unknown): unknown {
    if (err instanceof StoreError) return err;
    const text = (err as { details?: string })?.details ?? (err as Error)?.message ?? String(err);
    if (text.includes('database space exceeded')) return new CodedStoreError('SKIFF_ERR_STORE_NO_SPACE', { what: 'the etcd database is full', cause: text });
    return err;
  }

  /**
   * Every interval, compact up to the revision seen at the previous one (so watches and list pages can resume within
   * one interval), as upstream's compactor. The API servers sharing an etcd agree through a transaction on
   * `compact_rev_key`: only the one whose transaction wins compacts.
   */
  private async compactOldRevisions(): Promise<void> {
    if (this.closed) return;
    const target = this.compactCandidate;
    this.compactCandidate = this.lastRevision;
    if (target <= this.compacted) return;
    const key = Buffer.from(this.options.keyPrefix + COMPACT_KEY);
    try {
      const answer = await this.client.txn({
        compare: [{ result: 'EQUAL', target: 'VERSION', key, version: this.compactKeyVersion }],
        success: [{ request_put: { key, value: Buffer.from(String(target)) } }],
        failure: [{ request_range: { key } }],
      });
      if (!answer.succeeded) {
        this.compactKeyVersion = answer.responses[0]?.response_range?.kvs[0]?.version ?? 0;
        return;
      }
      this.compactKeyVersion++;
      await this.compact(target);
      this.logger?.debug({ revision: target }, 'etcd compacted');
    } catch (err) {
      if (!this.closed) this.logger?.error({ err, target }, 'periodic etcd compaction failed');
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new CodedStoreError('SKIFF_ERR_STORE_CLOSED');
  }
}

/** Connects to etcd, reads its revision and opens the watch every watcher of this store is served from. */
export function openEtcdStore(options: EtcdStoreOptions): Promise<EtcdStore> {
  return EtcdStore.open(options);
}
