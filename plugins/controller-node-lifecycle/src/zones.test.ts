import { describe, expect, it } from 'vitest';
import { RateLimiter, zoneState } from './zones.js';

const ready = { type: 'Ready', status: 'True' };
const unknown = { type: 'Ready', status: 'Unknown' };

describe('zoneState', () => {
  it('is fully disrupted with no ready node, partly with more than two and at least the threshold not ready', () => {
    expect(zoneState([unknown], 0.55).state).toBe('FullDisruption');
    expect(zoneState([ready, unknown], 0.55).state).toBe('Normal');
    expect(zoneState([ready, ready, unknown, unknown], 0.55).state).toBe('Normal');
    expect(zoneState([ready, ready, unknown, unknown, undefined], 0.55)).toEqual({ notReady: 3, state: 'PartialDisruption' });
    expect(zoneState([], 0.55).state).toBe('Normal');
  });
});

describe('RateLimiter', () => {
  it('lets one through at once, then one per 1/qps seconds; rate 0 lets none through', () => {
    const limiter = new RateLimiter(0.1);
    const now = Date.now();
    expect(limiter.tryAccept(now)).toBe(true);
    expect(limiter.tryAccept(now + 9_000)).toBe(false);
    expect(limiter.tryAccept(now + 10_001)).toBe(true);
    limiter.setRate(0);
    expect(limiter.tryAccept(now + 60_000)).toBe(false);
  });
});
