import { describe, expect, it } from 'vitest';
import { RetryAfter } from './retry-after.js';

describe('Retry-After of a level', () => {
  it('starts at 1 s, doubles each second the level keeps rejecting, up to 8 s, and halves for each quiet second', () => {
    let now = 0;
    const retryAfter = new RetryAfter(() => now);
    expect(retryAfter.rejected()).toBe(1);
    now = 500;
    expect(retryAfter.rejected()).toBe(1);
    const seen = [];
    for (let second = 1; second <= 5; second++) {
      now = second * 1000 + 100;
      seen.push(retryAfter.rejected());
    }
    expect(seen).toEqual([2, 4, 8, 8, 8]);
    // Two quiet seconds (6 and 7): 8 → 2.
    now = 8100;
    expect(retryAfter.rejected()).toBe(2);
    now = 60_000;
    expect(retryAfter.rejected()).toBe(1);
  });
});
