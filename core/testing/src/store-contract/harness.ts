import { randomBytes } from 'node:crypto';
import type { KubeObject } from '@skiff/api';
import { StoreError, type Store, type StoreErrorKind, type StoreEvent } from '@skiff/store';

/** How the contract suite gets the store under test. */
export interface StoreContractFactory {
  /** A store ready for writes. Several tests may share the data behind it (one etcd for the whole suite). */
  open(): Promise<Store>;
  /**
   * Called once for every store the suite opened, after its test, even if the test closed it already.
   * Without it the suite calls `store.close()`, so `close()` must then tolerate a closed store.
   */
  close?(store: Store): Promise<void>;
  /**
   * A new store over the same data as `closed`, as after a restart of the process. The suite has closed `closed`
   * already. Without it the tests of durability across a reopen are left out.
   */
  reopen?(closed: Store): Promise<Store>;
}

/**
 * What one test works with: its stores, opened through the factory and closed after it, and a namespace of its
 * own (random), so tests that share one backend never see each other's keys.
 */
export class ContractHarness {
  private readonly opened: Store[] = [];
  namespace = '';

  constructor(readonly factory: StoreContractFactory) {}

  /** Called before each test: a fresh namespace. */
  begin(): void {
    this.namespace = `contract-${randomBytes(6).toString('hex')}`;
  }

  async open(): Promise<Store> {
    const store = await this.factory.open();
    this.opened.push(store);
    return store;
  }

  async reopen(store: Store): Promise<Store> {
    if (!this.factory.reopen) throw new Error('the factory has no reopen()');
    await store.close();
    const reopened = await this.factory.reopen(store);
    this.opened.push(reopened);
    return reopened;
  }

  /** Called after each test. */
  async end(): Promise<void> {
    const stores = this.opened.splice(0);
    await Promise.all(stores.map((store) => (this.factory.close ? this.factory.close(store) : store.close())));
  }

  /** `/registry/pods/<this test's namespace>/<name>`. */
  podKey(name: string): string {
    return `${this.podPrefix()}${name}`;
  }

  /** The prefix of every pod of this test, with its trailing slash. */
  podPrefix(): string {
    return `/registry/pods/${this.namespace}/`;
  }

  /** A key of another resource in this test's namespace, to check that prefixes keep them apart. */
  otherKey(resource: string, name: string): string {
    return `/registry/${resource}/${this.namespace}/${name}`;
  }

  pod(name: string, extra: Partial<KubeObject> = {}): KubeObject {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: this.namespace, labels: { app: 'web' } },
      spec: { containers: [{ name: 'nginx', image: 'nginx:1.25' }] },
      ...extra,
    };
  }
}

/** The StoreError a promise rejects with; fails if it resolves or rejects with something else. */
export async function storeError(promise: Promise<unknown>): Promise<StoreError> {
  const outcome = await promise.then(
    (value: unknown) => ({ resolved: value }),
    (error: unknown) => ({ rejected: error }),
  );
  if ('resolved' in outcome) throw new Error(`expected a StoreError, but it resolved with ${JSON.stringify(outcome.resolved)}`);
  if (!(outcome.rejected instanceof StoreError)) throw outcome.rejected;
  return outcome.rejected;
}

/** Checks that a promise fails with a StoreError of `kind`. */
export async function rejectsWith(promise: Promise<unknown>, kind: StoreErrorKind): Promise<StoreError> {
  const error = await storeError(promise);
  if (error.kind !== kind) throw new Error(`expected StoreError '${kind}', got '${error.kind}': ${error.message}`);
  return error;
}

/**
 * The error a watch fails with, whether `watch()` throws it at once (as LmdbStore does) or its first `next()`
 * rejects with it (as a store that asks a server first may).
 */
export async function watchFailure(store: Store, prefix: string, fromRevision: number): Promise<StoreError> {
  const controller = new AbortController();
  try {
    return await storeError(Promise.resolve().then(() => store.watch(prefix, fromRevision, controller.signal)[Symbol.asyncIterator]().next()));
  } finally {
    controller.abort();
  }
}

export interface OpenWatch {
  events: AsyncIterator<StoreEvent>;
  abort(): void;
}

export function openWatch(store: Store, prefix: string, fromRevision: number): OpenWatch {
  const controller = new AbortController();
  const events = store.watch(prefix, fromRevision, controller.signal)[Symbol.asyncIterator]();
  return { events, abort: () => controller.abort() };
}

/** Reads `count` events, failing (instead of hanging) if they do not arrive within `timeoutMs`. */
export async function take(events: AsyncIterator<StoreEvent>, count: number, timeoutMs = 10_000): Promise<StoreEvent[]> {
  const taken: StoreEvent[] = [];
  const deadline = Date.now() + timeoutMs;
  while (taken.length < count) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`only ${taken.length} of ${count} events arrived within ${timeoutMs} ms`)), Math.max(0, deadline - Date.now()));
    });
    const next = await Promise.race([events.next(), timeout]).finally(() => clearTimeout(timer));
    if (next.done) throw new Error(`the watch ended after ${taken.length} of ${count} events`);
    taken.push(next.value);
  }
  return taken;
}

/** `TYPE key @revision`, to compare event streams at a glance. */
export const summary = (event: StoreEvent): string => `${event.type} ${event.key} @${event.revision}`;

/** Runs `count` creates at a time until `total` are written; returns key → revision of each. */
export async function createMany(
  store: Store,
  harness: ContractHarness,
  total: number,
  concurrency: number,
  name = (n: number) => `p${n}`,
): Promise<Map<string, number>> {
  const written = new Map<string, number>();
  for (let start = 0; start < total; start += concurrency) {
    const batch = Array.from({ length: Math.min(concurrency, total - start) }, (_, n) => name(start + n));
    const results = await Promise.all(batch.map((podName) => store.create(harness.podKey(podName), harness.pod(podName))));
    for (const result of results) written.set(result.key, result.revision);
  }
  return written;
}
