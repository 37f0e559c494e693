import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '@skiff/kernel';
import { OidcAuthenticator } from './authenticator.js';
import { issuerConfigs, type JwtEntryOptions } from './config.js';
import { IssuerKeys } from './issuer.js';
import { DEFAULT_SIGNING_ALGORITHMS } from './names.js';
import { startTestIssuer, type TestIssuer } from './test-support.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function entry(url: string, ca: string | undefined, extra: Partial<JwtEntryOptions> = {}): JwtEntryOptions {
  return { issuer: { url, audiences: ['skiff'], ...(ca ? { certificateAuthority: ca } : {}) }, claimMappings: { username: {}, groups: {}, uid: {} }, ...extra };
}

async function issuerKeys(issuer: TestIssuer, options: ConstructorParameters<typeof IssuerKeys>[1] = {}, trustIssuerCa = true) {
  const [config] = issuerConfigs([entry(issuer.url, trustIssuerCa ? issuer.caPem : undefined)], [...DEFAULT_SIGNING_ALGORITHMS], process.cwd());
  const keys = new IssuerKeys(config!, { retryMs: { first: 50, max: 200 }, ...options });
  cleanups.push(() => keys.stop());
  await keys.start();
  return keys;
}

async function freshIssuer(): Promise<TestIssuer> {
  const issuer = await startTestIssuer();
  cleanups.push(() => issuer.close());
  return issuer;
}

describe('the verification cache', () => {
  it('keeps an accepted token no longer than its exp, however long the TTL', async () => {
    const issuer = await freshIssuer();
    let now = Date.now();
    const authenticator = new OidcAuthenticator([await issuerKeys(issuer)], { cacheTTLMs: 3_600_000, cacheSize: 10, now: () => now });
    const exp = Math.floor(now / 1000) + 5;
    const token = await issuer.sign({ sub: 'alice', aud: 'skiff', exp });
    expect(await authenticator.authenticate(token)).toMatchObject({ user: { username: `${issuer.url}#alice` } });
    now += 3_000;
    expect(await authenticator.authenticate(token)).toMatchObject({ user: { username: `${issuer.url}#alice` } });
    now = exp * 1000;
    expect(await authenticator.authenticate(token)).toEqual({
      error: `oidc: verify token: token is expired (Token Expiry: ${new Date(exp * 1000).toISOString()})`,
    });
  });

  it('verifies again after the TTL: a key the issuer no longer publishes stops working', async () => {
    const issuer = await freshIssuer();
    let now = Date.now();
    const keys = await issuerKeys(issuer, { cooldownMs: 0, refreshMs: 1_000 });
    const authenticator = new OidcAuthenticator([keys], { cacheTTLMs: 10_000, cacheSize: 10, now: () => now });
    const token = await issuer.sign({ sub: 'alice', aud: 'skiff' });
    expect(await authenticator.authenticate(token)).toMatchObject({ user: {} });
    issuer.published.splice(0, 1, await issuer.newKey('key-2'));
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await authenticator.authenticate(token)).toMatchObject({ user: {} });
    now += 10_001;
    expect(await authenticator.authenticate(token)).toEqual({
      error: 'oidc: verify token: failed to verify signature: no key of the issuer matches the token (kid "key-1", alg "RS256")',
    });
  });

  it('holds no more tokens than its size', async () => {
    const issuer = await freshIssuer();
    const authenticator = new OidcAuthenticator([await issuerKeys(issuer)], { cacheTTLMs: 60_000, cacheSize: 3 });
    for (let i = 0; i < 10; i++) await authenticator.authenticate(await issuer.sign({ sub: `user-${i}`, aud: 'skiff' }));
    expect((authenticator as unknown as { cache: { size: number } }).cache.size).toBe(3);
  });
});

describe("the issuer's keys", () => {
  it('are fetched again for a token with a new kid (the issuer rotated its keys)', async () => {
    const issuer = await freshIssuer();
    const authenticator = new OidcAuthenticator([await issuerKeys(issuer, { cooldownMs: 0 })], { cacheTTLMs: 60_000, cacheSize: 10 });
    const fetched = issuer.requests.get('/idp/keys');
    const rotated = await issuer.newKey('key-2', 'ES256');
    issuer.published.push(rotated);
    expect(await authenticator.authenticate(await issuer.sign({ sub: 'alice', aud: 'skiff' }, { key: rotated }))).toMatchObject({
      user: { username: `${issuer.url}#alice` },
    });
    expect(issuer.requests.get('/idp/keys')).toBe(fetched! + 1);
  });

  it('are fetched at most once per cooldown for unknown kids', async () => {
    const issuer = await freshIssuer();
    const authenticator = new OidcAuthenticator([await issuerKeys(issuer, { cooldownMs: 60_000 })], { cacheTTLMs: 60_000, cacheSize: 10 });
    const fetched = issuer.requests.get('/idp/keys');
    for (let i = 0; i < 20; i++) {
      const stranger = await issuer.newKey(`stranger-${i}`, 'ES256');
      expect(await authenticator.authenticate(await issuer.sign({ sub: 'mallory', aud: 'skiff' }, { key: stranger }))).toMatchObject({
        error: expect.stringContaining('no key of the issuer matches the token'),
      });
    }
    expect(issuer.requests.get('/idp/keys')).toBe(fetched);
  });
});

describe('an issuer that goes down after discovery', () => {
  it('leaves its keys in use: tokens verify without reaching it, also after a failed refresh', async () => {
    const issuer = await startTestIssuer();
    const keys = await issuerKeys(issuer, { refreshMs: 200 });
    const authenticator = new OidcAuthenticator([keys], { cacheTTLMs: 0, cacheSize: 10 });
    await issuer.close();
    for (let i = 0; i < 3; i++) {
      expect(await authenticator.authenticate(await issuer.sign({ sub: `user-${i}`, aud: 'skiff' }))).toMatchObject({
        user: { username: `${issuer.url}#user-${i}` },
      });
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  });
});

describe('discovery', () => {
  it('refuses tokens until the issuer answers, then accepts them (retried in the background)', async () => {
    // A port that refuses connections until the issuer listens on it.
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
    const url = `https://127.0.0.1:${port}/idp`;
    const issuer = await startTestIssuer();
    cleanups.push(() => issuer.close());
    const [config] = issuerConfigs([entry(url, issuer.caPem)], [...DEFAULT_SIGNING_ALGORITHMS], process.cwd());
    const keys = new IssuerKeys(config!, { retryMs: { first: 50, max: 100 } });
    cleanups.push(() => keys.stop());
    await keys.start();
    const authenticator = new OidcAuthenticator([keys], { cacheTTLMs: 60_000, cacheSize: 10 });
    const token = await issuer.sign({ iss: url, sub: 'alice', aud: 'skiff' });
    expect(await authenticator.authenticate(token)).toEqual({
      error: expect.stringMatching(new RegExp(`^oidc: authenticator for issuer "${url}" is not initialized: .*ECONNREFUSED`)),
    });
    // The same issuer, now on the port the config names.
    const moved = await startTestIssuer({ port, keys: issuer.published, tls: issuer.tls });
    cleanups.push(() => moved.close());
    await waitFor('the issuer to be discovered', async () => 'user' in ((await authenticator.authenticate(token)) ?? {}), { timeoutMs: 5_000 });
  });

  it('does not hold the start up for an issuer that never answers, and gives up on each try after the timeout', async () => {
    const held = new Set<Socket>();
    const silent = createServer((socket) => held.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => {
      for (const socket of held) socket.destroy();
      return new Promise((resolve) => silent.close(resolve));
    });
    const url = `https://127.0.0.1:${(silent.address() as { port: number }).port}/idp`;
    const [config] = issuerConfigs([entry(url, undefined)], [...DEFAULT_SIGNING_ALGORITHMS], process.cwd());
    const keys = new IssuerKeys(config!, { startWaitMs: 100, timeoutMs: 300, retryMs: { first: 10_000, max: 10_000 } });
    cleanups.push(() => keys.stop());
    const started = performance.now();
    await keys.start();
    expect(performance.now() - started).toBeLessThan(250);
    expect(keys.keys()).toEqual({ error: `oidc: authenticator for issuer "${url}" is not initialized: discovery has not finished yet` });
    await waitFor('the first try to time out', () => 'error' in keys.keys() && /no answer within 300 ms/.test((keys.keys() as { error: string }).error), {
      timeoutMs: 2_000,
    });
  });

  it('refuses a discovery document of another issuer', async () => {
    const issuer = await startTestIssuer({ discoveryIssuer: 'https://evil.example.com' });
    cleanups.push(() => issuer.close());
    const authenticator = new OidcAuthenticator([await issuerKeys(issuer)], { cacheTTLMs: 60_000, cacheSize: 10 });
    expect(await authenticator.authenticate(await issuer.sign({ sub: 'alice', aud: 'skiff' }))).toEqual({
      error: `oidc: authenticator for issuer "${issuer.url}" is not initialized: the discovery document ${issuer.url}/.well-known/openid-configuration is for issuer "https://evil.example.com", not "${issuer.url}"`,
    });
  });

  it("trusts only the configured CA (or the system roots) for the issuer's TLS", async () => {
    const issuer = await freshIssuer();
    const authenticator = new OidcAuthenticator([await issuerKeys(issuer, {}, false)], { cacheTTLMs: 60_000, cacheSize: 10 });
    expect(await authenticator.authenticate(await issuer.sign({ sub: 'alice', aud: 'skiff' }))).toEqual({
      error: expect.stringMatching(/is not initialized: .*(self[- ]signed|unable to verify|local issuer)/i),
    });
  });
});
