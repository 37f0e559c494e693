import type { KubeObject } from '@skiff/api';

/**
 * The storage contract (etcd semantics). Keys are strings such as "/registry/pods/default/web-1";
 * the API server builds them, the store only orders them. Values are Kubernetes objects.
 *
 * - One global revision; every write gets the next one; `metadata.resourceVersion` of a stored object
 *   is the revision of its last write (the store sets it, as a decimal string).
 * - Nothing is acknowledged (no promise resolves) before the write is durable on disk.
 * - A write that cannot be committed (a full disk: StoreError 'NoSpace') changes nothing; reads, watches and
 *   later writes go on.
 */
export interface Store {
  /**
   * True when other processes write to the same storage (several API servers on one etcd); absent or false when this
   * process owns it (LMDB). What each API server keeps to itself — such as a lease of its own in the `kubernetes`
   * Service's endpoints — is only needed when it is shared.
   */
  readonly shared?: boolean;
  /** Current revision (the last committed write; 0 for an empty store). */
  revision(): number;
  /** The oldest revision a watch may start after (older → StoreError 'Compacted'). */
  compactedRevision(): number;

  get(key: string): Promise<StoredObject | undefined>;
  /**
   * Objects whose key starts with `prefix`, in key order, from one consistent snapshot. The objects are frozen
   * and may be shared with other readers (like watch events): copy one before changing it.
   */
  list(prefix: string, options?: ListOptions): Promise<ListResult>;

  /** Fails with StoreError 'Exists' if the key is taken. Returns the stored object (resourceVersion set). */
  create(key: string, object: KubeObject): Promise<StoredObject>;
  /**
   * Replaces the object. With `expectedRevision`, fails with StoreError 'Conflict' unless the stored
   * object's revision equals it; fails with 'NotFound' if the key is absent.
   */
  update(key: string, object: KubeObject, options?: { expectedRevision?: number }): Promise<StoredObject>;
  /**
   * Read-modify-write with retries: `fn` gets the current object (or undefined) and returns the new one,
   * or undefined to leave it unchanged. Runs inside one write transaction, so no other write interleaves.
   */
  guaranteedUpdate(key: string, fn: (current: StoredObject | undefined) => KubeObject | undefined): Promise<StoredObject | undefined>;
  /** Deletes; with `expectedRevision`, conditional. Returns the deleted object; 'NotFound' if absent. */
  delete(key: string, options?: { expectedRevision?: number }): Promise<StoredObject>;

  /**
   * Events for keys under `prefix` after `fromRevision` (exclusive), then live ones, in revision order.
   * `fromRevision` older than compactedRevision() → throws StoreError 'Compacted' (the API answers 410).
   * Ends when `signal` aborts.
   */
  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<StoreEvent>;

  /** Drops event-log entries up to `revision` (inclusive). */
  compact(revision: number): Promise<void>;
  close(): Promise<void>;
}

export interface StoredObject {
  key: string;
  object: KubeObject;
  /** Revision of the object's last write (== Number(object.metadata.resourceVersion)). */
  revision: number;
}

export interface ListOptions {
  /** Stop after this many items; the result then carries a continue token. */
  limit?: number;
  /** A token from an earlier page: continues from the same snapshot revision. */
  continue?: string;
  /**
   * List the state as it was at this revision rather than the current one (a `continue` token carries
   * its own). Fails with 'Compacted' once the event log no longer reaches back to it; a revision newer
   * than the store's is a usage error (wait for it first).
   */
  revision?: number;
  /** Only objects for which this returns true count (and count towards limit). */
  filter?: (object: KubeObject) => boolean;
}

export interface ListResult {
  items: StoredObject[];
  /** The snapshot revision the list reflects. */
  revision: number;
  continue?: string;
  remainingItemCount?: number;
}

export interface StoreEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: string;
  revision: number;
  object: KubeObject;
  prevObject?: KubeObject;
}

/**
 * `NoSpace`: the disk (or LMDB's map) is full, so the write was not committed; `CommitFailed`: the commit failed
 * for another reason (an I/O error). Neither leaves anything written, and the next write tries again.
 */
export type StoreErrorKind = 'NotFound' | 'Exists' | 'Conflict' | 'Compacted' | 'InvalidContinue' | 'Closed' | 'NoSpace' | 'CommitFailed';

/** Marks StoreErrors so that `instanceof StoreError` holds across copies of this package. */
const STORE_ERROR = Symbol.for('@skiff/store.StoreError');

export class StoreError extends Error {
  /**
   * `err instanceof StoreError` is also true for a StoreError of another copy of @skiff/store: a plugin that bundles
   * its own, or a process that loads one component from sources and another from its build.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    return this === StoreError && typeof value === 'object' && value !== null && (value as { [STORE_ERROR]?: unknown })[STORE_ERROR] === true;
  }

  readonly [STORE_ERROR] = true;

  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    readonly key?: string,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}
