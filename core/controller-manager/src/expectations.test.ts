import { describe, expect, it } from 'vitest';
import { Expectations, EXPECTATIONS_TIMEOUT_MS } from './expectations.js';

describe('Expectations', () => {
  it('is satisfied for a controller nothing is expected of', () => {
    expect(new Expectations().satisfied('default/web')).toBe(true);
  });

  it('waits until every expected creation has been observed', () => {
    const expectations = new Expectations();
    expectations.expectCreations('default/web', 2);
    expect(expectations.satisfied('default/web')).toBe(false);
    expectations.creationObserved('default/web');
    expect(expectations.satisfied('default/web')).toBe(false);
    expectations.creationObserved('default/web');
    expect(expectations.satisfied('default/web')).toBe(true);
  });

  it('tracks deletions by pod, so observing the same pod twice counts once', () => {
    const expectations = new Expectations();
    expectations.expectDeletions('default/web', ['default/web-a', 'default/web-b']);
    expectations.deletionObserved('default/web', 'default/web-a');
    expectations.deletionObserved('default/web', 'default/web-a');
    expect(expectations.satisfied('default/web')).toBe(false);
    expectations.deletionObserved('default/web', 'default/web-b');
    expect(expectations.satisfied('default/web')).toBe(true);
  });

  it('waits for creations and deletions set together until both were seen', () => {
    const expectations = new Expectations();
    expectations.expect('ns/ds', 2, ['ns/p1']);
    expectations.creationObserved('ns/ds');
    expectations.deletionObserved('ns/ds', 'ns/p1');
    expect(expectations.satisfied('ns/ds')).toBe(false);
    expectations.creationObserved('ns/ds');
    expect(expectations.satisfied('ns/ds')).toBe(true);
  });

  it('replaces what was awaited on each call', () => {
    const expectations = new Expectations();
    expectations.expectCreations('default/web', 3);
    expectations.expectDeletions('default/web', []);
    expect(expectations.satisfied('default/web')).toBe(true);
  });

  it('gives up after the timeout, so a lost event cannot stall a controller', () => {
    let now = 1_000;
    const expectations = new Expectations(() => now);
    expectations.expectCreations('default/web', 1);
    now += EXPECTATIONS_TIMEOUT_MS - 1;
    expect(expectations.satisfied('default/web')).toBe(false);
    now += 1;
    expect(expectations.satisfied('default/web')).toBe(true);
  });

  it('forgets a deleted controller', () => {
    const expectations = new Expectations();
    expectations.expectCreations('default/web', 3);
    expectations.forget('default/web');
    expect(expectations.satisfied('default/web')).toBe(true);
  });
});
