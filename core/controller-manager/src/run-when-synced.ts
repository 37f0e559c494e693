import { runWorkers, type WorkQueue } from '@skiff/client';
import type { ControllerContext, Informer } from '@skiff/kernel';

export interface RunWhenSyncedOptions<T> {
  /** The caches the controller reads; no worker starts before every one has synced. */
  informers: readonly Pick<Informer, 'waitForSync'>[];
  queue: WorkQueue<T>;
  workers: number;
  /** Handles one item of the queue; a failure is retried with backoff (see `runWorkers`). */
  sync: (item: T) => Promise<void>;
  /** Runs once, after the caches have synced and before the first worker: for work that needs full caches, such as queueing every cached object. */
  beforeWorkers?: () => void;
}

/**
 * The run loop of a queue-driven controller: waits for its caches, then works the queue with `workers`
 * workers until the context's signal aborts, and resolves when they have exited. A worker that read a
 * half-filled cache would take a missing object for a deleted one, hence the wait. Stopping while the
 * caches are still filling is not a failure: the queue is shut down and the call resolves quietly.
 */
export async function runWhenSynced<T>(ctx: Pick<ControllerContext, 'signal' | 'logger' | 'metrics'>, options: RunWhenSyncedOptions<T>): Promise<void> {
  const { signal, logger } = ctx;
  const { informers, queue, workers, sync, beforeWorkers } = options;
  if (ctx.metrics) queue.instrument(ctx.metrics);
  try {
    // One at a time: the caches fill in parallel anyway, and each wait holds just one listener on the shared signal.
    for (const informer of informers) await informer.waitForSync(signal);
  } catch (err) {
    queue.shutDown();
    if (signal.aborted) return;
    throw err;
  }
  beforeWorkers?.();
  await runWorkers(queue, workers, sync, { logger, signal });
}
