import { describe, expect, it } from 'vitest';
import { WrittenObjects } from './written-objects.js';
import type { EndpointSlice } from '@skiff/api';

const slice = (uid: string, generation: number): EndpointSlice => ({ metadata: { name: uid, namespace: 'default', uid, generation }, addressType: 'IPv4' });

describe('WrittenObjects', () => {
  it('holds a Service stale until the cache shows what was written, or that what was deleted is gone', () => {
    const expectations = new WrittenObjects<EndpointSlice>();
    expectations.written('default/web', slice('a', 2));
    expect(expectations.stale('default/web', [])).toBe(true);
    expect(expectations.stale('default/web', [slice('a', 1)])).toBe(true);
    expect(expectations.stale('default/other', [])).toBe(false);
    expect(expectations.stale('default/web', [slice('a', 2)])).toBe(false);
    expect(expectations.stale('default/web', [])).toBe(false);

    expectations.deleted('default/web', slice('b', 1));
    expect(expectations.stale('default/web', [slice('b', 1)])).toBe(true);
    expectations.observedDeletion(slice('b', 1));
    expect(expectations.stale('default/web', [slice('b', 1)])).toBe(false);
  });

  it('is satisfied by informer events, and forgets a Service that is gone', () => {
    const expectations = new WrittenObjects<EndpointSlice>();
    expectations.written('default/web', slice('a', 3));
    expectations.observed(slice('a', 3));
    expect(expectations.stale('default/web', [])).toBe(false);
    expectations.written('default/web', slice('c', 1));
    expectations.forget('default/web');
    expect(expectations.stale('default/web', [])).toBe(false);
  });
});
