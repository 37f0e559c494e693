/** What a Job's pod failures since its last success say about when the next pod may start. */
export interface BackoffRecord {
  failuresAfterLastSuccess: number;
  /** When the latest of those failures happened (ms since the epoch). */
  lastFailureTime?: number;
}

export const NO_BACKOFF: BackoffRecord = Object.freeze({ failuresAfterLastSuccess: 0 });

/**
 * The record after a sync saw pods finish: a success clears the failures that came before it, failures
 * after the latest success add up.
 */
export function nextBackoffRecord(previous: BackoffRecord, successTimes: readonly number[], failureTimes: readonly number[]): BackoffRecord {
  let { failuresAfterLastSuccess, lastFailureTime } = previous;
  let failures = failureTimes;
  if (successTimes.length > 0) {
    const lastSuccess = Math.max(...successTimes);
    failures = failureTimes.filter((time) => time > lastSuccess);
    failuresAfterLastSuccess = 0;
    lastFailureTime = undefined;
  }
  if (failures.length === 0) return { failuresAfterLastSuccess, ...(lastFailureTime === undefined ? {} : { lastFailureTime }) };
  return { failuresAfterLastSuccess: failuresAfterLastSuccess + failures.length, lastFailureTime: Math.max(lastFailureTime ?? 0, ...failures) };
}

/**
 * How long to wait before creating pods: `base * 2^(failures-1)` (at most `max`) after the last failure,
 * less the time already passed; 0 when there were no failures since the last success.
 */
export function remainingBackoffMs(record: BackoffRecord, now: number, baseMs: number, maxMs: number): number {
  if (record.failuresAfterLastSuccess === 0 || record.lastFailureTime === undefined) return 0;
  const delay = Math.min(baseMs * 2 ** Math.min(record.failuresAfterLastSuccess - 1, 30), maxMs);
  return Math.max(0, record.lastFailureTime + delay - now);
}
