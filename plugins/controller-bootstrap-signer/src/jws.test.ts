import { describe, expect, it } from 'vitest';
import { signClusterInfo, verifyClusterInfoSignature } from './jws.js';

const KUBECONFIG = 'Hello, joining node!\n';

describe('cluster-info signatures', () => {
  it('is a detached HS256 JWS keyed with the whole token', () => {
    // Computed apart from this code (Python's hmac over the RFC 7515 signing input).
    expect(signClusterInfo(KUBECONFIG, 'abcdef', '0123456789abcdef')).toBe(
      'eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9..rerSIJ8bagZusDvgyfEen6hGpUQG-qK9O69_LX447hY',
    );
    const [header, payload] = signClusterInfo(KUBECONFIG, 'abcdef', '0123456789abcdef').split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({ alg: 'HS256', kid: 'abcdef' });
    expect(payload).toBe('');
  });

  it('verifies with the token that signed, and with no other', () => {
    const jws = signClusterInfo(KUBECONFIG, 'abcdef', '0123456789abcdef');
    expect(verifyClusterInfoSignature(KUBECONFIG, jws, 'abcdef', '0123456789abcdef')).toBe(true);
    expect(verifyClusterInfoSignature(KUBECONFIG, jws, 'abcdef', '0123456789abcdee')).toBe(false);
    expect(verifyClusterInfoSignature(KUBECONFIG, jws, 'abcdeg', '0123456789abcdef')).toBe(false);
    expect(verifyClusterInfoSignature(`${KUBECONFIG} `, jws, 'abcdef', '0123456789abcdef')).toBe(false);
  });

  it('refuses signatures that are not of this form', () => {
    const jws = signClusterInfo(KUBECONFIG, 'abcdef', '0123456789abcdef');
    const [header, , signature] = jws.split('.') as [string, string, string];
    const payload = Buffer.from(KUBECONFIG).toString('base64url');
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const refused = [
      `${header}.${payload}.${signature}`,
      `${header}..${signature}.`,
      `${header}..${signature.slice(0, -2)}`,
      `${header}..${signature}==`,
      `${encode({ alg: 'none', kid: 'abcdef' })}..`,
      `${encode({ alg: 'HS256' })}..${signature}`,
      `${encode({ alg: 'HS256', kid: 'abcdef', crit: ['exp'] })}..${signature}`,
      `not-json..${signature}`,
      '',
    ];
    for (const candidate of refused) expect(verifyClusterInfoSignature(KUBECONFIG, candidate, 'abcdef', '0123456789abcdef'), candidate).toBe(false);
  });
});
