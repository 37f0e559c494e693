import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { parse, stringify } from 'yaml';
import { ensurePki } from '@skiff/apiserver';
import { kubectlOn, kubectlVersions } from './clients.js';
import { runSkiffExpectingFailure, startSkiff, tempDir, type RunningSkiff } from './harness.js';

// OIDC bearer tokens in a real `skiff up` with @skiff/plugin-authn-oidc, driven by the real kubectl 1.36 with
// --token: a real identity provider over HTTPS on 127.0.0.1 (its own CA, a discovery document and a key set),
// tokens signed with jose. `kubectl auth whoami` shows the mapped user and groups; a token for another audience,
// an expired one, or one signed by a key the issuer does not publish is a 401; ServiceAccount tokens still work.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('oidc');
const cacheDir = tempDir('oidc-cache');
let skiff: RunningSkiff;
let idp: Server;
let issuerUrl = '';
const idpRequests = new Map<string, number>();
let signingKey: { kid: string; privateKey: CryptoKey; jwk: JWK };
let ca: string;
const kubeconfigFile = join(project, 'token.kubeconfig');
const { kubectl, ok, json } = kubectlOn(kubectl136.path, () => kubeconfigFile, cacheDir);
const admin = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);

async function newKey(kid: string): Promise<typeof signingKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

function sign(claims: JWTPayload, key = signingKey): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: issuerUrl, aud: 'skiff', iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid })
    .sign(key.privateKey);
}

/** A raw GET with a bearer token, trusting the cluster CA: the Status a 401 carries, which kubectl does not print. */
function get(path: string, token: string): Promise<{ status?: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, skiff.server), { ca, headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(body) }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  const pkiDir = mkdtempSync(join(project, 'idp-pki-'));
  const pki = ensurePki(pkiDir, '127.0.0.1');
  signingKey = await newKey('idp-key-1');
  idp = createServer({ cert: pki.certPem, key: pki.keyPem }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://idp').pathname;
    idpRequests.set(path, (idpRequests.get(path) ?? 0) + 1);
    res.setHeader('content-type', 'application/json');
    if (path === '/realms/skiff/.well-known/openid-configuration') res.end(JSON.stringify({ issuer: issuerUrl, jwks_uri: `${issuerUrl}/certs` }));
    else if (path === '/realms/skiff/certs') res.end(JSON.stringify({ keys: [signingKey.jwk] }));
    else res.writeHead(404).end('{}');
  });
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  issuerUrl = `https://127.0.0.1:${(idp.address() as AddressInfo).port}/realms/skiff`;
  writeFileSync(join(project, 'idp-ca.crt'), pki.caPem);
  writeFileSync(
    join(project, 'skiff.config.mjs'),
    `export default ${JSON.stringify(
      {
        plugins: [
          [
            '@skiff/plugin-authn-oidc',
            {
              jwt: [
                {
                  issuer: { url: issuerUrl, audiences: ['skiff'], certificateAuthorityFile: 'idp-ca.crt' },
                  claimMappings: { username: { claim: 'email', prefix: 'oidc:' }, groups: { claim: 'groups', prefix: 'oidc:' } },
                  claimValidationRules: [{ claim: 'realm', requiredValue: 'skiff' }],
                },
              ],
            },
          ],
        ],
      },
      null,
      2,
    )};\n`,
  );
  skiff = await startSkiff(['--data-dir', join(project, 'data')], { cwd: project });
  // A kubeconfig with the cluster and no credentials of its own: each command brings its --token.
  const adminConfig = parse(readFileSync(skiff.kubeconfig, 'utf8'));
  ca = Buffer.from(adminConfig.clusters[0].cluster['certificate-authority-data'], 'base64').toString('utf8');
  writeFileSync(
    kubeconfigFile,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'skiff', cluster: adminConfig.clusters[0].cluster }],
      users: [{ name: 'nobody', user: {} }],
      contexts: [{ name: 'skiff', context: { cluster: 'skiff', user: 'nobody' } }],
      'current-context': 'skiff',
    }),
  );
});
afterAll(async () => {
  await skiff?.stop();
  idp?.closeAllConnections();
  await new Promise((resolve) => (idp ? idp.close(resolve) : resolve(undefined)));
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

const alice = { sub: 'f81d4fae', email: 'alice@example.com', email_verified: true, realm: 'skiff', groups: ['developers', 'oncall'] };
/**
 * kubectl's line for a 401, which carries the Status message: the reasons of every authenticator that recognised
 * the token and refused it (the token file refuses every bearer token it does not hold).
 */
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const unauthorized = (reason: string) => ({
  code: 1,
  stderr: expect.stringMatching(new RegExp(`^error: You must be logged in to the server \\(Unauthorized: .*${escape(reason)}`)),
});

describe('kubectl --token with a token of the configured issuer', () => {
  it('is the mapped user: kubectl auth whoami shows the user and groups', async () => {
    const review = await json('auth', 'whoami', `--token=${await sign(alice)}`);
    expect(review.status.userInfo).toEqual({ username: 'oidc:alice@example.com', groups: ['oidc:developers', 'oidc:oncall', 'system:authenticated'] });
    const table = await ok('auth', 'whoami', `--token=${await sign(alice)}`);
    expect(table).toMatch(/Username\s+oidc:alice@example\.com/);
    expect(table).toMatch(/Groups\s+\[oidc:developers oidc:oncall system:authenticated\]/);
  });

  it('works for ordinary requests (the dev preset allows every authenticated user)', async () => {
    expect(await ok('get', 'namespace', 'default', '-o', 'name', `--token=${await sign(alice)}`)).toBe('namespace/default\n');
  });

  it('does not reach the issuer per request: discovery once, keys once', async () => {
    const token = await sign({ ...alice, email: 'bob@example.com' });
    for (let i = 0; i < 5; i++) await ok('auth', 'whoami', `--token=${token}`);
    expect(Object.fromEntries(idpRequests)).toEqual({ '/realms/skiff/.well-known/openid-configuration': 1, '/realms/skiff/certs': 1 });
  });
});

describe('refused tokens of the issuer: 401', () => {
  it('another audience', async () => {
    const token = await sign({ ...alice, aud: 'grafana' });
    const reason = 'oidc: verify token: expected audience in ["skiff"], got "grafana"';
    expect(await kubectl(['auth', 'whoami', `--token=${token}`])).toMatchObject(unauthorized(reason));
    expect(await get('/api/v1/namespaces', token)).toMatchObject({
      status: 401,
      body: { kind: 'Status', reason: 'Unauthorized', details: { causes: expect.arrayContaining([{ reason: 'Unauthorized', message: reason }]) } },
    });
  });

  it('expired', async () => {
    const exp = Math.floor(Date.now() / 1000) - 30;
    const token = await sign({ ...alice, iat: exp - 600, exp });
    const reason = `oidc: verify token: token is expired (Token Expiry: ${new Date(exp * 1000).toISOString()})`;
    expect(await kubectl(['get', 'pods', `--token=${token}`])).toMatchObject(unauthorized(reason));
    expect((await get('/api/v1/pods', token)).status).toBe(401);
  });

  it("signed by a key the issuer does not publish, under a kid of its own or the issuer's", async () => {
    for (const kid of ['attacker', 'idp-key-1']) {
      const token = await sign(alice, await newKey(kid));
      expect(await kubectl(['auth', 'whoami', `--token=${token}`]), kid).toMatchObject(unauthorized('oidc: verify token: failed to verify signature'));
      expect((await get('/api/v1/namespaces', token)).status, kid).toBe(401);
    }
  });

  it('without the required claim, or with an unverified email', async () => {
    const noRealm = await sign({ ...alice, realm: 'other' });
    expect(await kubectl(['auth', 'whoami', `--token=${noRealm}`])).toMatchObject(unauthorized('oidc: required claim "realm" value does not match'));
    expect(await kubectl(['auth', 'whoami', `--token=${await sign({ ...alice, email_verified: false })}`])).toMatchObject(
      unauthorized('oidc: email not verified'),
    );
  });
});

describe('other bearer tokens', () => {
  it('pass the OIDC authenticator by: a ServiceAccount token still authenticates', async () => {
    const token = (await admin.ok('create', 'token', 'default')).trim();
    const review = await json('auth', 'whoami', `--token=${token}`);
    expect(review.status.userInfo.username).toBe('system:serviceaccount:default:default');
  });

  it('a JWT of an issuer nobody configured is a plain 401', async () => {
    const token = await new SignJWT({ ...alice, iss: 'https://idp.example.com', aud: 'skiff', exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: 'RS256', kid: signingKey.kid })
      .sign(signingKey.privateKey);
    const answer = await get('/api/v1/namespaces', token);
    expect(answer).toMatchObject({ status: 401, body: { reason: 'Unauthorized' } });
    expect(answer.body.message).not.toContain('oidc');
  });
});

describe('a wrong option', () => {
  it('stops skiff up with one line naming the plugin and the option', async () => {
    const dir = tempDir('oidc-bad');
    try {
      writeFileSync(
        join(dir, 'skiff.config.mjs'),
        `export default { plugins: [['@skiff/plugin-authn-oidc', { jwt: [{ issuer: { url: 'http://login.example.com', audiences: ['skiff'] } }] }]] };\n`,
      );
      const result = await runSkiffExpectingFailure(['--data-dir', join(dir, 'data')], dir);
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(
        'skiff: plugin "@skiff/plugin-authn-oidc": option "jwt[0].issuer.url" must be an https URL (got "http://login.example.com")',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
