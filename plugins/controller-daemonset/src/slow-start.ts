export interface BatchResult {
  successes: number;
  /** The first failure; no further batches were started after it. */
  error?: unknown;
}

/**
 * Runs `fn` `count` times in batches of 1, 2, 4, … and stops after the first batch with a failure: when
 * every creation fails the same way (a quota, admission), one doomed request is made instead of hundreds.
 */
export async function slowStartBatch(count: number, initialBatchSize: number, fn: () => Promise<void>): Promise<BatchResult> {
  let remaining = count;
  let successes = 0;
  for (let size = Math.min(remaining, initialBatchSize); size > 0; size = Math.min(2 * size, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: size }, () => fn()));
    successes += results.filter((result) => result.status === 'fulfilled').length;
    const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failure) return { successes, error: failure.reason };
    remaining -= size;
  }
  return { successes };
}
