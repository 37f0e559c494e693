import { describe, expect, it } from 'vitest';
import { Backoff } from './backoff.js';
import { Expectations, EXPECTATIONS_TIMEOUT_MS } from './expectations.js';

describe('Expectations', () => {
  it('is satisfied once every creation and deletion was seen, or after the timeout', () => {
    let now = 0;
    const expectations = new Expectations(() => now);
    expect(expectations.satisfied('ns/ds')).toBe(true);
    expectations.expect('ns/ds', 2, ['ns/p1']);
    expectations.creationObserved('ns/ds');
    expectations.deletionObserved('ns/ds', 'ns/p1');
    expect(expectations.satisfied('ns/ds')).toBe(false);
    expectations.creationObserved('ns/ds');
    expect(expectations.satisfied('ns/ds')).toBe(true);
    expectations.expect('ns/ds', 1, []);
    now += EXPECTATIONS_TIMEOUT_MS;
    expect(expectations.satisfied('ns/ds')).toBe(true);
  });
});

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
