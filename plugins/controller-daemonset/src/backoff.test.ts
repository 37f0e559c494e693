import { describe, expect, it } from 'vitest';
import { Backoff } from './backoff.js';

describe('Backoff', () => {
  it('doubles the wait on each action up to the maximum, and starts over after a long quiet', () => {
    let now = 0;
    const backoff = new Backoff(() => now, 1000, 4000);
    expect(backoff.remaining('k')).toBe(0);
    backoff.next('k');
    expect(backoff.remaining('k')).toBe(1000);
    now += 1000;
    backoff.next('k');
    expect(backoff.remaining('k')).toBe(2000);
    backoff.next('k');
    backoff.next('k');
    expect(backoff.remaining('k')).toBe(4000);
    now += 9000;
    backoff.next('k');
    expect(backoff.remaining('k')).toBe(1000);
  });
});
