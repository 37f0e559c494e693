import { describe, expect, it } from 'vitest';
import { makeCertificate, newKey } from './test-support.js';
import { ClientCertificateVerifier } from './verify.js';

// Real certificates made with node-forge: one cluster CA, another CA (with the very same name), an intermediate.
const HOUR = 60 * 60 * 1000;
const leafKey = newKey();
const ca = makeCertificate({ cn: 'skiff-ca', isCa: true });
const otherCa = makeCertificate({ cn: 'skiff-ca', isCa: true });
const intermediate = makeCertificate({ cn: 'team-ca', isCa: true, issuer: ca });
const client = (spec: Parameters<typeof makeCertificate>[0] = {}) =>
  makeCertificate({ cn: 'jane', o: ['devs', 'ops'], issuer: ca, key: leafKey, extKeyUsage: { clientAuth: true }, ...spec });

const reasonOf = (result: ReturnType<ClientCertificateVerifier['authenticate']>) => (result && 'reason' in result ? result.reason : undefined);
const userOf = (result: ReturnType<ClientCertificateVerifier['authenticate']>) => (result && 'user' in result ? result.user : undefined);

describe('ClientCertificateVerifier', () => {
  const verifier = new ClientCertificateVerifier(ca.certPem);

  it('takes the user from CN and the groups from O, with system:authenticated and the certificate as credential id', () => {
    const good = client();
    const user = userOf(verifier.authenticate([good.der]));
    expect(user).toEqual({
      username: 'jane',
      groups: ['devs', 'ops', 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/credential-id': [expect.stringMatching(/^X509SHA256=[0-9a-f]{64}$/)] },
    });
    expect(Object.isFrozen(user) && Object.isFrozen(user!.groups)).toBe(true);
  });

  it('passes requests without a certificate to the next authenticator', () => {
    expect(verifier.authenticate(undefined)).toBeUndefined();
    expect(verifier.authenticate([])).toBeUndefined();
  });

  it('refuses a certificate from another CA, even one with the same name', () => {
    const foreign = client({ issuer: otherCa });
    expect(reasonOf(verifier.authenticate([foreign.der]))).toBe('x509: certificate signed by unknown authority (issuer "CN=skiff-ca")');
    // Presenting the other CA along does not help.
    expect(reasonOf(verifier.authenticate([foreign.der, otherCa.der]))).toMatch(/unknown authority/);
  });

  it('refuses an expired certificate and one not valid yet', () => {
    const expired = client({ notBefore: new Date(Date.now() - 48 * HOUR), notAfter: new Date(Date.now() - HOUR) });
    expect(reasonOf(verifier.authenticate([expired.der]))).toMatch(
      /^x509: certificate has expired or is not yet valid: current time \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ is after \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );
    const early = client({ notBefore: new Date(Date.now() + HOUR) });
    expect(reasonOf(verifier.authenticate([early.der]))).toMatch(/is before/);
  });

  it('refuses a certificate whose extended key usage leaves out client authentication, accepts one that does not restrict it', () => {
    const serving = client({ extKeyUsage: { serverAuth: true } });
    expect(reasonOf(verifier.authenticate([serving.der]))).toBe(
      'x509: certificate specifies an incompatible key usage (client authentication is not among its extended key usages)',
    );
    const both = client({ extKeyUsage: { serverAuth: true, clientAuth: true } });
    expect(userOf(verifier.authenticate([both.der]))?.username).toBe('jane');
    const unrestricted = client({ extKeyUsage: undefined });
    expect(userOf(verifier.authenticate([unrestricted.der]))?.username).toBe('jane');
  });

  it('refuses a certificate without a CN', () => {
    const anonymous = client({ cn: undefined });
    expect(reasonOf(verifier.authenticate([anonymous.der]))).toBe('x509: the client certificate has no common name (CN) to take as the user name');
  });

  it('follows intermediates the client presents, which must be CAs', () => {
    const viaTeam = client({ issuer: intermediate, cn: 'bob', o: [] });
    expect(userOf(verifier.authenticate([viaTeam.der, intermediate.der]))).toMatchObject({ username: 'bob', groups: ['system:authenticated'] });
    expect(reasonOf(verifier.authenticate([viaTeam.der]))).toMatch(/unknown authority \(issuer "CN=team-ca"\)/);
    const notCa = makeCertificate({ cn: 'team-ca', issuer: ca, extKeyUsage: { clientAuth: true } });
    const viaNotCa = client({ issuer: notCa, cn: 'mallory' });
    expect(reasonOf(verifier.authenticate([viaNotCa.der, notCa.der]))).toMatch(/unknown authority/);
  });

  it('accepts any CA of a bundle', () => {
    const bundle = new ClientCertificateVerifier(`${ca.certPem}\n${otherCa.certPem}`);
    expect(userOf(bundle.authenticate([client({ issuer: otherCa }).der]))?.username).toBe('jane');
    expect(() => new ClientCertificateVerifier('not a certificate')).toThrow('the CA bundle holds no certificate');
  });

  it('keeps verdicts, yet checks the validity window on every request', () => {
    let now = Date.now();
    const clocked = new ClientCertificateVerifier(ca.certPem, { now: () => now });
    const shortLived = client({ notAfter: new Date(now + HOUR) });
    const chain = [shortLived.der];
    expect(userOf(clocked.authenticate(chain))?.username).toBe('jane');
    now += 2 * HOUR;
    expect(reasonOf(clocked.authenticate(chain))).toMatch(/has expired/);
    // The same bytes in a new array (a new connection) are found by their digest.
    expect(reasonOf(clocked.authenticate([Buffer.from(shortLived.der)]))).toMatch(/has expired/);
  });

  it('is cheap for a client that keeps sending the same certificate', () => {
    const good = client();
    const sameConnection = [good.der];
    const first = performance.now();
    verifier.authenticate([Buffer.from(good.der)]);
    const uncached = performance.now() - first;
    const start = performance.now();
    for (let i = 0; i < 10_000; i++) verifier.authenticate(sameConnection);
    const perRequest = (performance.now() - start) / 10_000;
    const newConnections = performance.now();
    for (let i = 0; i < 1_000; i++) verifier.authenticate([Buffer.from(good.der)]);
    const perConnection = (performance.now() - newConnections) / 1_000;
    // Measured: about 0.3 µs per request on one connection, 6 µs per new connection (a copy and a SHA-256), ~500 µs uncached.
    expect(perRequest).toBeLessThan(0.02);
    expect(perConnection).toBeLessThan(0.1);
    expect(perConnection).toBeLessThan(uncached);
  });

  it('keeps at most cacheSize verdicts', () => {
    const small = new ClientCertificateVerifier(ca.certPem, { cacheSize: 2 });
    const certificates = [client({ cn: 'a' }), client({ cn: 'b' }), client({ cn: 'c' })];
    for (const certificate of certificates) expect(userOf(small.authenticate([Buffer.from(certificate.der)]))).toBeDefined();
    expect((small as unknown as { byDigest: Map<string, unknown> }).byDigest.size).toBe(2);
  });
});
