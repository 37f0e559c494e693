import type { MessagePort } from 'node:worker_threads';
import type { KubeObject } from '@skiff/api';
import { answerCalls, PortCalls } from '@skiff/kernel';
import { StoreUsageError } from './errors.js';
import { StoreError, type Store, type StoreErrorKind, type StoredObject } from './types.js';

/** Atomics.waitAsync (Node 16+; TypeScript's lib has it from es2024 on). */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(array: BigInt64Array, index: number, value: bigint, timeoutMs: number): { async: boolean; value: Promise<string> | string };
  }
).waitAsync;

/**
 * The newest revision any thread of a store has committed, in memory all the threads share: a writer announces its
 * commit here, and every other thread wakes up to read the new entries of the event log (Atomics.waitAsync costs no
 * event-loop turn while nothing happens, and holds no reference that keeps a thread alive).
 */
export class CommitAnnouncements {
  private readonly cell: BigInt64Array;

  constructor(buffer: SharedArrayBuffer) {
    this.cell = new BigInt64Array(buffer, 0, 1);
  }

  /** The newest revision announced by any thread. */
  latest(): number {
    return Number(Atomics.load(this.cell, 0));
  }

  /** Records that `revision` is committed (the announced revision only ever grows) and wakes every follower. */
  announce(revision: number): void {
    const next = BigInt(revision);
    for (let seen = Atomics.load(this.cell, 0); seen < next; ) {
      const found = Atomics.compareExchange(this.cell, 0, seen, next);
      if (found === seen) break;
      seen = found;
    }
    Atomics.notify(this.cell, 0);
  }

  /**
   * Calls `onAnnounced` after each announcement (several may come as one call), and every `pollMs` in any case; until
   * the returned function is called.
   */
  follow(onAnnounced: () => void, pollMs: number): () => void {
    let following = true;
    const loop = async (): Promise<void> => {
      let seen = Atomics.load(this.cell, 0);
      while (following) {
        const waited = waitAsync(this.cell, 0, seen, pollMs);
        if (waited.async) await waited.value;
        if (!following) return;
        seen = Atomics.load(this.cell, 0);
        onAnnounced();
      }
    };
    void loop();
    return () => {
      following = false;
    };
  }
}

/** What a failed write relayed to the primary thread throws in the worker: the primary's error, as it was. */
interface RelayedFailure {
  message: string;
  kind?: StoreErrorKind;
  key?: string;
  code?: string;
  usage?: boolean;
}

type WriteCall =
  | { op: 'create'; key: string; object: KubeObject }
  | { op: 'update'; key: string; object: KubeObject; expectedRevision?: number }
  | { op: 'delete'; key: string; expectedRevision?: number };

/** The error a write relayed from a worker thread failed with in the primary, with its kind, key and code. */
class RelayedStoreError extends StoreError {
  constructor(
    readonly code: string | undefined,
    kind: StoreErrorKind,
    message: string,
    key?: string,
  ) {
    super(kind, message, key);
  }
}

function failureOf(err: unknown): RelayedFailure {
  if (err instanceof StoreError) return { message: err.message, kind: err.kind, key: err.key, code: (err as { code?: string }).code };
  if (err instanceof StoreUsageError) return { message: err.message, code: err.code, usage: true };
  return { message: err instanceof Error ? err.message : String(err) };
}

function errorOf(failure: RelayedFailure): Error {
  if (failure.kind) return new RelayedStoreError(failure.code, failure.kind, failure.message, failure.key);
  const error = new Error(failure.message);
  if (failure.usage) error.name = 'StoreUsageError';
  return Object.assign(error, failure.code ? { code: failure.code } : {});
}

type Writes = Pick<Store, 'create' | 'update' | 'delete'>;

/**
 * The primary thread's side of the store's writes: each worker thread sends its creates, updates and deletes here, so
 * that one thread writes and LMDB commits every thread's writes in one transaction (threads writing for themselves
 * each hold the write lock for a commit of their own, and wait for the others').
 */
export function serveWrites(port: MessagePort, store: Writes): void {
  answerCalls<WriteCall, RelayedFailure>(
    port,
    (call) =>
      call.op === 'create'
        ? store.create(call.key, call.object)
        : call.op === 'update'
          ? store.update(call.key, call.object, { expectedRevision: call.expectedRevision })
          : store.delete(call.key, { expectedRevision: call.expectedRevision }),
    failureOf,
  );
}

/** A worker thread's side: its writes, made by the primary thread. */
export class WriteRelay implements Writes {
  private readonly calls: PortCalls<RelayedFailure>;

  constructor(port: MessagePort) {
    this.calls = new PortCalls(port, errorOf);
  }

  create(key: string, object: KubeObject): Promise<StoredObject> {
    return this.send({ op: 'create', key, object });
  }

  update(key: string, object: KubeObject, options: { expectedRevision?: number } = {}): Promise<StoredObject> {
    return this.send({ op: 'update', key, object, expectedRevision: options.expectedRevision });
  }

  delete(key: string, options: { expectedRevision?: number } = {}): Promise<StoredObject> {
    return this.send({ op: 'delete', key, expectedRevision: options.expectedRevision });
  }

  private send(call: WriteCall): Promise<StoredObject> {
    return this.calls.call(call) as Promise<StoredObject>;
  }
}
