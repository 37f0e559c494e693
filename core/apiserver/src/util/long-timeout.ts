/** setTimeout's longest delay, 2^31-1 ms (about 24.8 days): Node fires a longer one at once. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** Calls `callback` once `ms` have passed, however long that is (timers chained past setTimeout's limit); returns the cancel function. */
export function longTimeout(callback: () => void, ms: number): () => void {
  let remaining = ms;
  let timer: NodeJS.Timeout;
  const arm = (): void => {
    const step = Math.min(remaining, MAX_TIMER_DELAY_MS);
    remaining -= step;
    timer = setTimeout(remaining > 0 ? arm : callback, step);
  };
  arm();
  return () => clearTimeout(timer);
}
