export interface BatchResult {
  successes: number;
  /** The first failure; no further batches were started after it. */
  error?: unknown;
}

/**
 * Runs `fn` `count` times in growing parallel batches (`initialBatchSize`, then double that, … never past
 * what is left), stopping after the first batch that has a failure. When every call fails the same way
 * (a quota, a webhook, admission), this makes one doomed request instead of hundreds, while healthy work
 * still ramps up quickly. Controllers use it for the pod creations of one sync.
 */
export async function slowStartBatch(count: number, initialBatchSize: number, fn: () => Promise<void>): Promise<BatchResult> {
  let remaining = count;
  let successes = 0;
  for (let batchSize = Math.min(remaining, initialBatchSize); batchSize > 0; batchSize = Math.min(2 * batchSize, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: batchSize }, () => fn()));
    const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    successes += results.filter((result) => result.status === 'fulfilled').length;
    if (failure) return { successes, error: failure.reason };
    remaining -= batchSize;
  }
  return { successes };
}
