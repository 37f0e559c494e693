import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signJwt } from './jwt.js';
import { ensureSigningKey, publicJwk, signingKeyFromPem } from './keys.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-sa-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ensureSigningKey', () => {
  it('creates an RSA 2048 key (mode 0600) on first start and reuses it afterwards', () => {
    const file = join(dir, 'pki', 'sa.key');
    const first = ensureSigningKey(file);
    expect(first.alg).toBe('RS256');
    expect(first.privateKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const pem = readFileSync(file, 'utf8');
    const again = ensureSigningKey(file);
    expect(again.kid).toBe(first.kid);
    expect(readFileSync(file, 'utf8')).toBe(pem);
  });

  it('names the file and the problem when the key cannot be used', () => {
    const file = join(dir, 'small.key');
    writeFileSync(file, generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    expect(() => ensureSigningKey(file)).toThrow(`service account signing key ${file}: an RSA key needs at least 2048 bits (got 1024)`);
    const ed = join(dir, 'ed.key');
    writeFileSync(ed, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
    expect(() => ensureSigningKey(ed)).toThrow('unsupported key type ed25519');
    const garbage = join(dir, 'garbage.key');
    writeFileSync(garbage, 'not a key');
    expect(() => ensureSigningKey(garbage)).toThrow(`service account signing key ${garbage}:`);
  });
});

describe('signingKeyFromPem', () => {
  it('signs with ES256 from a P-256 key (SEC1 or PKCS#8); the kid is the SHA-256 of the public key', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const sec1 = signingKeyFromPem(privateKey.export({ type: 'sec1', format: 'pem' }) as string);
    const pkcs8 = signingKeyFromPem(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    expect(sec1.alg).toBe('ES256');
    expect(sec1.kid).toBe(pkcs8.kid);
    expect(sec1.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const token = signJwt({ a: 1 }, sec1);
    const [header, payload, signature] = token.split('.');
    expect(verify('sha256', Buffer.from(`${header}.${payload}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature!, 'base64url'))).toBe(
      true,
    );
  });

  it('publishes the public half as a JWK that verifies its tokens', () => {
    const key = signingKeyFromPem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string);
    const jwk = publicJwk(key);
    expect(jwk).toMatchObject({ use: 'sig', kid: key.kid, alg: 'RS256', kty: 'RSA', e: 'AQAB' });
    expect(jwk).not.toHaveProperty('d');
    const token = signJwt({ a: 1 }, key);
    const [header, payload, signature] = token.split('.');
    expect(verify('sha256', Buffer.from(`${header}.${payload}`), createPublicKey({ key: jwk, format: 'jwk' }), Buffer.from(signature!, 'base64url'))).toBe(
      true,
    );
  });
});
