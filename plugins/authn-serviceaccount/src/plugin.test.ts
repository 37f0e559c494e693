import { createPublicKey, verify } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { isApiError, RESOURCES, type KubeObject } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import tokenFile from '@skiff/plugin-authn-token-file';
import serviceAccountTokens from './index.js';
import { serviceAccountClaims } from './claims.js';
import { signJwt } from './jwt.js';
import { ensureSigningKey } from './keys.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';

interface TokenRequest extends KubeObject {
  spec: { audiences: string[]; expirationSeconds: number; boundObjectRef: { kind: string; apiVersion: string; name: string; uid: string } | null };
  status: { token: string; expirationTimestamp: string };
}

interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: any;
}

let plane: ControlPlane;

/** A request over the real HTTPS listener, as a client holding `token` would send it. */
function https(method: string, path: string, token: string | undefined, body?: unknown): Promise<HttpAnswer> {
  const { url, caPem } = plane.kernel.resolve('apiServerInfo');
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${url}${path}`,
      {
        method,
        ca: caPem,
        headers: {
          accept: 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(payload ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** `kubectl auth whoami` with the token: who the server takes the caller for. */
async function whoami(token: string): Promise<HttpAnswer> {
  return https('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', token, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
}

function requestToken(namespace: string, name: string, spec: Record<string, unknown> = {}): Promise<TokenRequest> {
  return plane.client.createSubresource<TokenRequest>(RESOURCES.serviceaccounts, name, namespace, 'token', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec,
  });
}

async function rejection(promise: Promise<unknown>): Promise<{ reason?: string; message: string; status?: number }> {
  try {
    await promise;
  } catch (err) {
    if (isApiError(err)) return { reason: err.reason, message: err.message, status: err.status };
    throw err;
  }
  throw new Error('expected the request to fail');
}

async function createAccount(namespace: string, name: string): Promise<KubeObject> {
  return plane.client.create(RESOURCES.serviceaccounts, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } }, namespace);
}

beforeAll(async () => {
  // The token file's admin token (an opaque bearer token) shares the chain stage with service account tokens.
  plane = await startControlPlane([tokenFile, [serviceAccountTokens, { maxExpirationSeconds: 7200 }]]);
  await plane.client.create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } });
});
afterAll(async () => {
  await plane?.stop();
});

describe('TokenRequest (serviceaccounts/token)', () => {
  it('is listed by discovery as a subresource speaking authentication.k8s.io/v1 TokenRequest', async () => {
    const list = await https('GET', '/api/v1', plane.kernel.resolve('adminCredential').token);
    expect(list.json.resources.find((r: { name: string }) => r.name === 'serviceaccounts/token')).toMatchObject({
      namespaced: true,
      group: 'authentication.k8s.io',
      version: 'v1',
      kind: 'TokenRequest',
      verbs: ['create'],
    });
  });

  it('issues a token for an existing account, with the API defaults filled in', async () => {
    const account = await createAccount('apps', 'builder');
    const before = Date.now();
    const answer = await requestToken('apps', 'builder');
    expect(answer).toMatchObject({
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name: 'builder', namespace: 'apps' },
      spec: { audiences: [ISSUER], expirationSeconds: 3600, boundObjectRef: null },
    });
    const expires = Date.parse(answer.status.expirationTimestamp);
    expect(expires).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3600_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000);
    const claims = JSON.parse(Buffer.from(answer.status.token.split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({
      iss: ISSUER,
      sub: 'system:serviceaccount:apps:builder',
      aud: [ISSUER],
      'kubernetes.io': { namespace: 'apps', serviceaccount: { name: 'builder', uid: account.metadata.uid } },
    });
    expect(claims.exp - claims.iat).toBe(3600);
    expect(claims.nbf).toBe(claims.iat);
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('authenticates its holder as the service account', async () => {
    const account = await plane.client.get(RESOURCES.serviceaccounts, 'builder', 'apps');
    const { status } = await requestToken('apps', 'builder');
    const review = await whoami(status.token);
    expect(review.status).toBe(201);
    expect(review.json.status.userInfo).toEqual({
      username: 'system:serviceaccount:apps:builder',
      uid: account.metadata.uid,
      groups: ['system:serviceaccounts', 'system:serviceaccounts:apps', 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${JSON.parse(Buffer.from(status.token.split('.')[1]!, 'base64url').toString()).jti}`] },
    });
  });

  it('answers the lifetime and audiences asked for, shortening lifetimes beyond the maximum', async () => {
    const answer = await requestToken('apps', 'builder', { audiences: ['vault', 'api'], expirationSeconds: 86400 });
    expect(answer.spec).toMatchObject({ audiences: ['vault', 'api'], expirationSeconds: 7200 });
    const claims = JSON.parse(Buffer.from(answer.status.token.split('.')[1]!, 'base64url').toString());
    expect(claims.aud).toEqual(['vault', 'api']);
    expect(claims.exp - claims.iat).toBe(7200);
  });

  it('refuses what the API refuses: unknown accounts, short lifetimes, other kinds', async () => {
    expect(await rejection(requestToken('apps', 'nobody'))).toMatchObject({ reason: 'NotFound', message: 'serviceaccounts "nobody" not found' });
    expect(await rejection(requestToken('apps', 'builder', { expirationSeconds: 60 }))).toMatchObject({
      reason: 'Invalid',
      message:
        'TokenRequest.authentication.k8s.io "builder" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    });
    expect(
      await rejection(plane.client.createSubresource(RESOURCES.serviceaccounts, 'builder', 'apps', 'token', { apiVersion: 'v1', kind: 'Secret' })),
    ).toMatchObject({
      reason: 'BadRequest',
      message: 'expected a TokenRequest, got kind "Secret"',
    });
  });

  it('issues no token on a dry run', async () => {
    const answer = await https('POST', '/api/v1/namespaces/apps/serviceaccounts/builder/token?dryRun=All', plane.kernel.resolve('adminCredential').token, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {},
    });
    expect(answer.status).toBe(201);
    expect(answer.json.status.token).toBe('');
  });
});

describe('the service account authenticator', () => {
  it('refuses a token meant for another audience', async () => {
    const { status } = await requestToken('apps', 'builder', { audiences: ['vault'] });
    const review = await whoami(status.token);
    expect(review.status).toBe(401);
    expect(review.json.message).toContain(`service account token audiences ["vault"] are not accepted here (want one of ["${ISSUER}"])`);
  });

  it('refuses an expired token and one with a forged signature', async () => {
    const account = await plane.client.get(RESOURCES.serviceaccounts, 'builder', 'apps');
    const key = ensureSigningKey(join(plane.dataDir, 'pki', 'sa.key'));
    const binding = { namespace: 'apps', serviceaccount: { name: 'builder', uid: account.metadata.uid! } };
    const past = Math.floor(Date.now() / 1000) - 7200;
    const expired = signJwt(serviceAccountClaims({ issuer: ISSUER, audiences: [ISSUER], now: past, expirationSeconds: 3600, jti: 'old', binding }), key);
    const review = await whoami(expired);
    expect(review.status).toBe(401);
    expect(review.json.message).toContain('service account token has expired');

    const { status } = await requestToken('apps', 'builder');
    const [header, payload] = status.token.split('.');
    const forged = `${header}.${payload}.${Buffer.alloc(256, 1).toString('base64url')}`;
    expect((await whoami(forged)).json.message).toContain('service account token signature is invalid');
  });

  it('stops accepting a token once its account is deleted, even when one of the same name comes back', async () => {
    await createAccount('apps', 'temporary');
    const { status } = await requestToken('apps', 'temporary');
    expect((await whoami(status.token)).status).toBe(201);
    await plane.client.delete(RESOURCES.serviceaccounts, 'temporary', 'apps');
    const gone = await whoami(status.token);
    expect(gone.status).toBe(401);
    expect(gone.json.message).toContain('service account token is no longer valid: service account apps/temporary has been deleted');
    await createAccount('apps', 'temporary');
    const replaced = await whoami(status.token);
    expect(replaced.status).toBe(401);
    expect(replaced.json.message).toContain('service account apps/temporary has been deleted and created again');
  });

  it('passes bearer tokens that are not its own to the other authenticators', async () => {
    expect((await whoami(plane.kernel.resolve('adminCredential').token!)).status).toBe(201);
  });
});

describe('tokens bound to a pod', () => {
  async function createPod(name: string, serviceAccountName?: string): Promise<KubeObject> {
    return plane.client.create(
      RESOURCES.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'apps' },
        spec: { ...(serviceAccountName && { serviceAccountName }), containers: [{ name: 'c', image: 'nginx' }] },
      } as KubeObject,
      'apps',
    );
  }

  it('name the pod, authenticate with it in extra, and stop working when it is deleted', async () => {
    const pod = await createPod('web', 'builder');
    const answer = await requestToken('apps', 'builder', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web' } });
    expect(answer.spec.boundObjectRef).toEqual({ kind: 'Pod', apiVersion: 'v1', name: 'web', uid: pod.metadata.uid });
    const claims = JSON.parse(Buffer.from(answer.status.token.split('.')[1]!, 'base64url').toString());
    expect(claims['kubernetes.io'].pod).toEqual({ name: 'web', uid: pod.metadata.uid });
    const review = await whoami(answer.status.token);
    expect(review.json.status.userInfo.extra).toMatchObject({
      'authentication.kubernetes.io/pod-name': ['web'],
      'authentication.kubernetes.io/pod-uid': [pod.metadata.uid],
    });
    await plane.client.delete(RESOURCES.pods, 'web', 'apps');
    await waitFor('the pod to be gone', async () => (await plane.client.list(RESOURCES.pods, 'apps')).items.every((p) => p.metadata.name !== 'web'));
    const refused = await whoami(answer.status.token);
    expect(refused.status).toBe(401);
    expect(refused.json.message).toContain('service account token is no longer valid: pod apps/web has been deleted');
  });

  it('are refused for a pod of another account, a missing pod, a stale uid or an unbindable kind', async () => {
    const pod = await createPod('other');
    expect(await rejection(requestToken('apps', 'builder', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'other' } }))).toMatchObject({
      reason: 'BadRequest',
      message: 'cannot bind token for serviceaccount "builder" to pod running with different serviceaccount name.',
    });
    expect(await rejection(requestToken('apps', 'builder', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'ghost' } }))).toMatchObject({
      reason: 'NotFound',
      message: 'pods "ghost" not found',
    });
    await createAccount('apps', 'default');
    expect(await rejection(requestToken('apps', 'default', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'other', uid: 'stale' } }))).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on Pod "other": the UID in the bound object reference (stale) does not match the UID in record. The object might have been deleted and then recreated',
    });
    expect(
      (await requestToken('apps', 'default', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'other', uid: pod.metadata.uid } })).status.token,
    ).not.toBe('');
    expect(await rejection(requestToken('apps', 'builder', { boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' } }))).toMatchObject({
      reason: 'BadRequest',
      message: 'cannot bind token to object of type /v1, Kind=ConfigMap',
    });
  });
});

describe('issuer discovery', () => {
  it('serves the OpenID configuration and a JWKS that verifies issued tokens', async () => {
    const admin = plane.kernel.resolve('adminCredential').token;
    const configuration = await https('GET', '/.well-known/openid-configuration', admin);
    expect(configuration.json).toEqual({
      issuer: ISSUER,
      jwks_uri: `${ISSUER}/openid/v1/jwks`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    });
    const keySet = await https('GET', '/openid/v1/jwks', admin);
    expect(keySet.headers['content-type']).toBe('application/jwk-set+json');
    expect(keySet.json.keys).toHaveLength(1);
    const { status } = await requestToken('apps', 'builder');
    const [header, payload, signature] = status.token.split('.');
    const jwk = keySet.json.keys[0];
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({ alg: 'RS256', kid: jwk.kid });
    expect(verify('sha256', Buffer.from(`${header}.${payload}`), createPublicKey({ key: jwk, format: 'jwk' }), Buffer.from(signature!, 'base64url'))).toBe(
      true,
    );
  });
});
