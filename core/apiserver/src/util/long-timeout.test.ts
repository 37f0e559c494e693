import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { longTimeout, MAX_TIMER_DELAY_MS } from './long-timeout.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('longTimeout', () => {
  it('fires once the whole delay has passed, however far past the limit of one timer', () => {
    const fired = vi.fn();
    longTimeout(fired, 3 * MAX_TIMER_DELAY_MS + 1_000);
    vi.advanceTimersByTime(3 * MAX_TIMER_DELAY_MS + 999);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('fires short delays as setTimeout does', () => {
    const fired = vi.fn();
    longTimeout(fired, 50);
    vi.advanceTimersByTime(50);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('does not fire once cancelled, whichever of the chained timers is waiting', () => {
    const fired = vi.fn();
    const cancel = longTimeout(fired, 2 * MAX_TIMER_DELAY_MS);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS + 10);
    cancel();
    vi.advanceTimersByTime(2 * MAX_TIMER_DELAY_MS);
    expect(fired).not.toHaveBeenCalled();
  });
});
