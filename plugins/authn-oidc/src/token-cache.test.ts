import { describe, expect, it } from 'vitest';
import { TokenCache } from './token-cache.js';

describe('TokenCache', () => {
  it('verifies a token once while it is cached, and once for concurrent lookups', async () => {
    let now = 1_000;
    const cache = new TokenCache<string>(10, () => now);
    let verifications = 0;
    const verify = async () => {
      verifications++;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return 'alice';
    };
    const expiry = () => now + 100;
    expect(await Promise.all(Array.from({ length: 20 }, () => cache.get('token', verify, expiry)))).toEqual(Array(20).fill('alice'));
    expect(verifications).toBe(1);
    now += 99;
    await cache.get('token', verify, expiry);
    expect(verifications).toBe(1);
    now += 1;
    await cache.get('token', verify, expiry);
    expect(verifications).toBe(2);
  });

  it('does not store what has no expiry, or one already past', async () => {
    const cache = new TokenCache<string>(10, () => 1_000);
    await cache.get(
      'a',
      async () => 'x',
      () => undefined,
    );
    await cache.get(
      'b',
      async () => 'x',
      () => 1_000,
    );
    expect(cache.size).toBe(0);
  });

  it('drops the oldest entries beyond its size', async () => {
    const cache = new TokenCache<number>(2, () => 0);
    for (const [i, token] of ['a', 'b', 'c'].entries())
      await cache.get(
        token,
        async () => i,
        () => 10,
      );
    let verified = false;
    expect(
      await cache.get(
        'a',
        async () => ((verified = true), 9),
        () => 10,
      ),
    ).toBe(9);
    expect(verified).toBe(true);
    expect(
      await cache.get(
        'c',
        async () => -1,
        () => 10,
      ),
    ).toBe(2);
    expect(cache.size).toBe(2);
  });

  it('lets a failed verification be tried again', async () => {
    const cache = new TokenCache<string>(10, () => 0);
    await expect(
      cache.get(
        't',
        () => Promise.reject(new Error('boom')),
        () => 10,
      ),
    ).rejects.toThrow('boom');
    expect(
      await cache.get(
        't',
        async () => 'ok',
        () => 10,
      ),
    ).toBe('ok');
  });
});
