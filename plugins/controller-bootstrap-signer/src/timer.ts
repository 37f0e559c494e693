/**
 * The longest delay a Node.js timer keeps (2³¹−1 ms, about 24.8 days); a longer one fires at once. A token that
 * expires later than that is looked at again after this long, and rescheduled then.
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;
