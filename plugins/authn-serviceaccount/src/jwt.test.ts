import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeJwt, signJwt, verifyJwt } from './jwt.js';
import { signingKeyFromPem, type SigningKey } from './keys.js';

function keyOf(type: 'rsa' | 'ec'): SigningKey {
  const { privateKey } = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return signingKeyFromPem(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
}

const rsa = keyOf('rsa');
const ec = keyOf('ec');
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('signJwt / verifyJwt', () => {
  for (const [name, key] of [
    ['RS256', rsa],
    ['ES256', ec],
  ] as const) {
    it(`signs and verifies with ${name}, naming the key in the header`, () => {
      const token = signJwt({ sub: 'x', n: 1 }, key);
      const decoded = decodeJwt(token)!;
      expect(decoded.header).toEqual({ alg: name, kid: key.kid });
      expect(decoded.payload).toEqual({ sub: 'x', n: 1 });
      expect(verifyJwt(decoded, [key])).toBe(true);
    });
  }

  it('ES256 signatures are 64 bytes of r‖s, as JWS requires', () => {
    expect(decodeJwt(signJwt({}, ec))!.signature).toHaveLength(64);
  });

  it('refuses a changed payload, another key, a lying alg and alg "none"', () => {
    const token = signJwt({ sub: 'alice' }, rsa);
    const [header, , signature] = token.split('.');
    expect(verifyJwt(decodeJwt(`${header}.${b64({ sub: 'mallory' })}.${signature}`)!, [rsa])).toBe(false);
    expect(verifyJwt(decodeJwt(token)!, [keyOf('rsa')])).toBe(false);
    expect(verifyJwt(decodeJwt(`${b64({ alg: 'ES256', kid: rsa.kid })}.${token.split('.')[1]}.${signature}`)!, [rsa, ec])).toBe(false);
    expect(verifyJwt(decodeJwt(`${b64({ alg: 'none' })}.${b64({ sub: 'alice' })}.AA`)!, [rsa])).toBe(false);
  });

  it('finds the signing key among several by kid and alg; a wrong kid fails', () => {
    const token = signJwt({ sub: 'x' }, ec);
    expect(verifyJwt(decodeJwt(token)!, [rsa, ec])).toBe(true);
    const [, payload, signature] = token.split('.');
    expect(verifyJwt(decodeJwt(`${b64({ alg: 'ES256', kid: 'other' })}.${payload}.${signature}`)!, [ec])).toBe(false);
  });
});

describe('decodeJwt', () => {
  it('answers undefined for bearer tokens that are not JWTs', () => {
    expect(decodeJwt('abcdef')).toBeUndefined();
    expect(decodeJwt('a.b')).toBeUndefined();
    expect(decodeJwt('a.b.c.d')).toBeUndefined();
    expect(decodeJwt(`${b64({ alg: 'RS256' })}.${b64([1, 2])}.AA`)).toBeUndefined();
    expect(decodeJwt(`${b64({ alg: 'RS256' })}.not+base64url.AA`)).toBeUndefined();
    expect(decodeJwt(`${b64({ alg: 'RS256' })}.${Buffer.from('{broken').toString('base64url')}.AA`)).toBeUndefined();
  });
});
