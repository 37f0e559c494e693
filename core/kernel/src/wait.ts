export interface WaitForOptions {
  /** Give up after this long. Default: 10 000 ms. */
  timeoutMs?: number;
  /** Pause between two checks. Default: 25 ms. */
  intervalMs?: number;
}

type Falsy = undefined | null | false | 0 | '';

/**
 * Polls `check` until it returns a truthy value, and resolves with that value: the one way Skiff's tests
 * wait for a cluster to settle, instead of fixed sleeps. An error thrown by `check` counts as "not yet";
 * on timeout the last one is reported: `timed out after 10000 ms waiting for <what>: <last error>`.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | Falsy | Promise<T | Falsy>,
  { timeoutMs = 10_000, intervalMs = 25 }: WaitForOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as T;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const reason = lastError === undefined ? '' : `: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${reason}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
