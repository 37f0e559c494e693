import { describe, expect, it } from 'vitest';
import { checkClaims, serviceAccountClaims, serviceAccountUser, type KubernetesClaim } from './claims.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const NOW = 1_700_000_000;
const binding: KubernetesClaim = { namespace: 'apps', serviceaccount: { name: 'builder', uid: 'sa-uid' } };

function claims(extra: Partial<Parameters<typeof serviceAccountClaims>[0]> = {}) {
  return serviceAccountClaims({ issuer: ISSUER, audiences: [ISSUER], now: NOW, expirationSeconds: 3600, jti: 'jti-1', binding, ...extra });
}

const expect_ = { issuer: ISSUER, audiences: [ISSUER], now: NOW + 10 };
const payload = (object: object) => JSON.parse(JSON.stringify(object)) as Record<string, unknown>;

describe('serviceAccountClaims', () => {
  it('carries the standard claims and the kubernetes.io claim', () => {
    expect(claims()).toEqual({
      iss: ISSUER,
      sub: 'system:serviceaccount:apps:builder',
      aud: [ISSUER],
      exp: NOW + 3600,
      iat: NOW,
      nbf: NOW,
      jti: 'jti-1',
      'kubernetes.io': { namespace: 'apps', serviceaccount: { name: 'builder', uid: 'sa-uid' } },
    });
  });
});

describe('checkClaims', () => {
  it('accepts a fresh token for one of the audiences, keeping its bindings', () => {
    const bound = claims({ binding: { ...binding, pod: { name: 'web', uid: 'pod-uid' }, node: { name: 'n1', uid: 'node-uid' } } });
    const checked = checkClaims(payload(bound), { ...expect_, audiences: ['other', ISSUER] });
    expect(checked).toEqual({ claims: bound });
  });

  it('refuses an expired token, one not valid yet, and one issued in the future', () => {
    expect(checkClaims(payload(claims()), { ...expect_, now: NOW + 3600 })).toEqual({ error: 'service account token has expired' });
    expect(checkClaims(payload(claims({ now: NOW + 120 })), expect_)).toEqual({ error: 'service account token is not valid yet' });
    expect(checkClaims(payload({ ...claims(), nbf: undefined, iat: NOW + 120 }), expect_)).toEqual({ error: 'service account token was issued in the future' });
    // Within the clock skew allowance:
    expect(checkClaims(payload(claims({ now: NOW + 50 })), expect_)).toHaveProperty('claims');
  });

  it('refuses tokens for other audiences, naming both', () => {
    expect(checkClaims(payload(claims({ audiences: ['vault'] })), expect_)).toEqual({
      error: `service account token audiences ["vault"] are not accepted here (want one of ["${ISSUER}"])`,
    });
    expect(checkClaims(payload({ ...claims(), aud: ISSUER }), expect_)).toHaveProperty('claims.aud', [ISSUER]);
  });

  it('refuses malformed claims', () => {
    expect(checkClaims(payload({ ...claims(), exp: undefined }), expect_)).toEqual({ error: 'service account token has no expiry' });
    expect(checkClaims(payload({ ...claims(), sub: 'system:serviceaccount:apps:admin' }), expect_)).toEqual({
      error: 'service account token subject does not match its claims',
    });
    expect(checkClaims(payload({ ...claims(), 'kubernetes.io': { namespace: 'apps' } }), expect_)).toEqual({
      error: 'service account token has no valid "kubernetes.io" claim',
    });
    expect(checkClaims(payload({ ...claims(), 'kubernetes.io': { ...binding, pod: { name: 'web' } } }), expect_)).toEqual({
      error: 'service account token has a malformed pod binding',
    });
    expect(checkClaims(payload({ ...claims(), iss: 'https://elsewhere' }), expect_)).toEqual({ error: 'service account token has a different issuer' });
  });
});

describe('serviceAccountUser', () => {
  it('is system:serviceaccount:<ns>:<name> in the service account groups, with the token id', () => {
    expect(serviceAccountUser(claims())).toEqual({
      username: 'system:serviceaccount:apps:builder',
      uid: 'sa-uid',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:apps', 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/credential-id': ['JTI=jti-1'] },
    });
  });

  it('names the bound pod and its node in extra', () => {
    const user = serviceAccountUser(claims({ binding: { ...binding, pod: { name: 'web', uid: 'p1' }, node: { name: 'n1', uid: 'n-uid' } } }));
    expect(user.extra).toEqual({
      'authentication.kubernetes.io/pod-name': ['web'],
      'authentication.kubernetes.io/pod-uid': ['p1'],
      'authentication.kubernetes.io/node-name': ['n1'],
      'authentication.kubernetes.io/node-uid': ['n-uid'],
      'authentication.kubernetes.io/credential-id': ['JTI=jti-1'],
    });
  });
});
