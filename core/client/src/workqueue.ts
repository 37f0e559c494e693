import { isApiError, type KubeObject } from '@skiff/api';
import { currentTrace, runInTrace, tracingActive, withSpan, type Logger, type Registry, type TraceContext } from '@skiff/kernel';
import { WorkQueueMetrics } from './workqueue-metrics.js';

export interface WorkQueueOptions {
  /** Shown in logs. */
  name?: string;
  /** Who works the queue, in trace spans: controller-manager (the default), kubelet/<node>… */
  component?: string;
  /** First rate-limited retry delay; doubles with every requeue of the same item. */
  baseDelayMs?: number;
  /** Cap on the rate-limited retry delay. */
  maxDelayMs?: number;
}

/**
 * A work queue with client-go's guarantees: an item waits in the queue at most once however often it is
 * added, and is never handed to two workers at once — an item added while it is being processed is
 * queued again when its worker calls `done`. Controllers queue object keys, so a burst of events for
 * one object becomes one reconcile.
 */
export class WorkQueue<T = string> {
  readonly name: string;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly queue: T[] = [];
  /** Items waiting to be processed (in `queue`, or re-queued once their current processing is done). */
  private readonly dirty = new Set<T>();
  private readonly processing = new Set<T>();
  private readonly delayed = new Map<T, { readyAt: number; timer: NodeJS.Timeout }>();
  private readonly requeues = new Map<T, number>();
  private readonly waiters: (() => void)[] = [];
  private shuttingDown = false;
  /** Set by `instrument`; the maps below are filled only then. */
  private metrics?: WorkQueueMetrics;
  private readonly addedAt = new Map<T, number>();
  private readonly startedAt = new Map<T, number>();
  /** The trace each waiting item continues (only while tracing: see docs/tracing.md). */
  private readonly traces = new Map<T, TraceContext>();
  readonly component: string;

  constructor(options: WorkQueueOptions = {}) {
    this.name = options.name ?? 'queue';
    this.component = options.component ?? 'controller-manager';
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
  }

  add(item: T): void {
    if (tracingActive()) this.noteTrace(item);
    if (this.shuttingDown || this.dirty.has(item)) return;
    this.dirty.add(item);
    if (this.metrics) {
      this.metrics.added();
      this.addedAt.set(item, performance.now());
    }
    if (this.processing.has(item)) return;
    this.enqueue(item);
  }

  /** Adds `item` once `delayMs` has passed; of several pending delays for one item, the earliest wins. */
  addAfter(item: T, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) return this.add(item);
    const readyAt = Date.now() + delayMs;
    const pending = this.delayed.get(item);
    if (pending) {
      if (pending.readyAt <= readyAt) return;
      clearTimeout(pending.timer);
    }
    const timer = setTimeout(() => {
      this.delayed.delete(item);
      this.add(item);
    }, delayMs);
    this.delayed.set(item, { readyAt, timer });
  }

  /** Adds `item` after its own exponential backoff: base, 2×base, 4×base … up to the cap. */
  addRateLimited(item: T): void {
    const requeues = this.numRequeues(item);
    this.requeues.set(item, requeues + 1);
    this.metrics?.retried();
    this.addAfter(item, Math.min(this.baseDelayMs * 2 ** requeues, this.maxDelayMs));
  }

  /** Resets the item's backoff (call after it was processed successfully). */
  forget(item: T): void {
    this.requeues.delete(item);
  }

  numRequeues(item: T): number {
    return this.requeues.get(item) ?? 0;
  }

  /** The next item, once one is ready; `undefined` when the queue is shut down and drained. */
  async get(): Promise<T | undefined> {
    while (this.queue.length === 0) {
      if (this.shuttingDown) return undefined;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    const item = this.queue.shift() as T;
    this.dirty.delete(item);
    this.processing.add(item);
    if (this.metrics) this.took(item);
    return item;
  }

  /** Marks `item` processed; if it was added meanwhile, it goes back into the queue now. */
  done(item: T): void {
    this.processing.delete(item);
    if (this.metrics) this.finished(item);
    if (this.dirty.has(item)) this.enqueue(item);
  }

  /**
   * Reports this queue's workqueue_* metrics (client-go's names, label `name`) in `registry` from now on; a controller
   * calls it before anything is added (runWhenSynced does).
   */
  instrument(registry: Registry): void {
    this.metrics ??= new WorkQueueMetrics(registry, this.name, { depth: () => this.queue.length, processingSince: () => this.startedAt.values() });
  }

  private took(item: T): void {
    const now = performance.now();
    const added = this.addedAt.get(item);
    this.addedAt.delete(item);
    if (added !== undefined) this.metrics!.waited((now - added) / 1000);
    this.startedAt.set(item, now);
  }

  private finished(item: T): void {
    const started = this.startedAt.get(item);
    this.startedAt.delete(item);
    if (started !== undefined) this.metrics!.worked((performance.now() - started) / 1000);
  }

  private noteTrace(item: T): void {
    const ctx = currentTrace();
    if (ctx) this.traces.set(item, ctx);
  }

  /** The trace the item was added in, if any; handing it out forgets it. */
  takeTrace(item: T): TraceContext | undefined {
    if (this.traces.size === 0) return undefined;
    const ctx = this.traces.get(item);
    this.traces.delete(item);
    return ctx;
  }

  /** Items ready to be handed out (not counting those being processed or waiting for a delay). */
  len(): number {
    return this.queue.length;
  }

  /** Stops accepting items and drops pending delays; workers finish what is queued, then `get` answers `undefined`. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    this.traces.clear();
    for (const wake of this.waiters.splice(0)) wake();
  }

  private enqueue(item: T): void {
    this.queue.push(item);
    this.waiters.shift()?.();
  }
}

export interface RunWorkersOptions {
  logger: Logger;
  /** Aborting shuts the queue down; workers exit once it is drained. */
  signal: AbortSignal;
  /** Rate-limited retries of a failing item before it is dropped (until it is added again). Default 15. */
  maxRetries?: number;
}

/**
 * Runs `workers` loops of get → handle → done. Success forgets the item's backoff; a failure is logged
 * and retried with backoff until `maxRetries`. Resolves when every worker has exited.
 */
export async function runWorkers<T>(queue: WorkQueue<T>, workers: number, handle: (item: T) => Promise<void>, options: RunWorkersOptions): Promise<void> {
  const { logger, signal } = options;
  const maxRetries = options.maxRetries ?? 15;
  const shutDown = () => queue.shutDown();
  if (signal.aborted) shutDown();
  else signal.addEventListener('abort', shutDown, { once: true });

  const work = async () => {
    for (let item = await queue.get(); item !== undefined; item = await queue.get()) {
      try {
        const traced = queue.takeTrace(item);
        if (traced)
          await runInTrace(traced, () =>
            withSpan({ name: `${queue.name} sync ${String(item)}`, kind: 'controller', component: queue.component }, () => handle(item)),
          );
        else await handle(item);
        queue.forget(item);
      } catch (err) {
        const retries = queue.numRequeues(item);
        if (retries < maxRetries) {
          // A 409 Conflict is optimistic concurrency doing its job: the next pass reads the newer object.
          const log = isApiError(err, 'Conflict') ? logger.debug.bind(logger) : logger.warn.bind(logger);
          log({ err, queue: queue.name, item, retries }, 'work item failed; retrying with backoff');
          queue.addRateLimited(item);
        } else {
          logger.error({ err, queue: queue.name, item, retries }, 'work item failed too often; dropping it');
          queue.forget(item);
        }
      } finally {
        queue.done(item);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: workers }, work));
  } finally {
    signal.removeEventListener('abort', shutDown);
  }
}

/** The key informers and work queues use: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(object: KubeObject): string {
  const { namespace, name = '' } = object.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

export function splitObjectKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
