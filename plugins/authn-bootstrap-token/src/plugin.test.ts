import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES, type Secret } from '@skiff/api';
import { startControlPlane, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import tokenFile from '@skiff/plugin-authn-token-file';
import bootstrapTokens from './index.js';
import { expirationOf, splitBootstrapToken } from './token-secret.js';

interface Answer {
  status: number;
  json: any;
}

let plane: ControlPlane;
let folder: string;

/** `kubectl auth whoami` over the real HTTPS listener, as a client holding `token`. */
function whoami(token: string): Promise<Answer> {
  const { url, caPem } = plane.kernel.resolve('apiServerInfo');
  const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      {
        method: 'POST',
        ca: caPem,
        headers: { accept: 'application/json', authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A bootstrap token Secret as kubeadm writes one, with `data` over the usual fields. */
async function createToken(id: string, secret: string, data: Record<string, string | undefined> = {}): Promise<Secret> {
  const stringData = Object.fromEntries(
    Object.entries({ 'token-id': id, 'token-secret': secret, 'usage-bootstrap-authentication': 'true', ...data }).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
  return plane.client.create<Secret>(
    RESOURCES.secrets,
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
      type: 'bootstrap.kubernetes.io/token',
      stringData,
    },
    'kube-system',
  );
}

const inOneHour = () => new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

beforeAll(async () => {
  // The token file knows an opaque token and one that merely looks like a bootstrap token.
  folder = mkdtempSync(join(tmpdir(), 'skiff-bootstrap-authn-'));
  const file = join(folder, 'tokens.csv');
  writeFileSync(file, 'opaque-token-for-alice,alice,alice,"dev"\nzzzzzz.0000000000000000,carol,carol\n');
  plane = await startControlPlane([[tokenFile, { file, bootstrapAdmin: false }], bootstrapTokens]);
});
afterAll(async () => {
  await plane?.stop();
  rmSync(folder, { recursive: true, force: true });
});

describe('bootstrap token authentication over HTTPS', () => {
  it('authenticates a valid token as system:bootstrap:<id> in its groups', async () => {
    await createToken('abcdef', '0123456789abcdef', {
      expiration: inOneHour(),
      'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token,system:bootstrappers:worker',
    });
    const answer = await whoami('abcdef.0123456789abcdef');
    expect(answer.status).toBe(201);
    expect(answer.json.status.userInfo).toEqual({
      username: 'system:bootstrap:abcdef',
      groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:bootstrappers:worker', 'system:authenticated'],
    });
  });

  it('authenticates a token without expiration or extra groups', async () => {
    await createToken('noexp1', '1111111111111111');
    expect((await whoami('noexp1.1111111111111111')).json.status.userInfo).toEqual({
      username: 'system:bootstrap:noexp1',
      groups: ['system:bootstrappers', 'system:authenticated'],
    });
  });

  it('refuses a wrong secret, and an unknown id, without telling them apart', async () => {
    const wrong = await whoami('abcdef.ffffffffffffffff');
    expect(wrong.status).toBe(401);
    expect(wrong.json.message).toContain('bootstrap token abcdef is invalid');
    const unknown = await whoami('qqqqqq.0123456789abcdef');
    expect(unknown.status).toBe(401);
    expect(unknown.json.message).toContain('bootstrap token qqqqqq is invalid');
  });

  it('refuses an expired token, and one whose expiration is not a time', async () => {
    await createToken('expird', '2222222222222222', { expiration: '2020-01-01T00:00:00Z' });
    const expired = await whoami('expird.2222222222222222');
    expect(expired.status).toBe(401);
    expect(expired.json.message).toContain('bootstrap token expird has expired');
    await createToken('badexp', '3333333333333333', { expiration: 'tomorrow' });
    expect((await whoami('badexp.3333333333333333')).status).toBe(401);
  });

  it('refuses a token not meant for authentication, and one claiming a group outside system:bootstrappers:', async () => {
    await createToken('signer', '4444444444444444', { 'usage-bootstrap-authentication': undefined, 'usage-bootstrap-signing': 'true' });
    const signing = await whoami('signer.4444444444444444');
    expect(signing.status).toBe(401);
    expect(signing.json.message).toContain('may not be used for authentication');
    await createToken('master', '5555555555555555', { 'auth-extra-groups': 'system:masters' });
    const escalating = await whoami('master.5555555555555555');
    expect(escalating.status).toBe(401);
    expect(escalating.json.message).toContain('"system:masters"');
  });

  it('refuses a Secret of another type or one whose token-id disagrees with its name', async () => {
    await plane.client.create<Secret>(
      RESOURCES.secrets,
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'bootstrap-token-opaque', namespace: 'kube-system' },
        stringData: { 'token-id': 'opaque', 'token-secret': '6666666666666666', 'usage-bootstrap-authentication': 'true' },
      },
      'kube-system',
    );
    expect((await whoami('opaque.6666666666666666')).status).toBe(401);
    await createToken('namedx', '7777777777777777', { 'token-id': 'otherx' });
    expect((await whoami('namedx.7777777777777777')).status).toBe(401);
  });

  it('stops accepting a token as soon as its Secret is deleted', async () => {
    await createToken('revoke', '8888888888888888');
    expect((await whoami('revoke.8888888888888888')).status).toBe(201);
    await plane.client.delete(RESOURCES.secrets, 'bootstrap-token-revoke', 'kube-system');
    expect((await whoami('revoke.8888888888888888')).status).toBe(401);
  });

  it('leaves tokens of another shape to the next authenticator', async () => {
    const alice = await whoami('opaque-token-for-alice');
    expect(alice.json.status.userInfo).toMatchObject({ username: 'alice', groups: ['dev', 'system:authenticated'] });
    // Shaped like a bootstrap token but without a Secret: the token file, tapped at the same stage, still decides.
    expect((await whoami('zzzzzz.0000000000000000')).json.status.userInfo).toMatchObject({ username: 'carol' });
  });
});

describe('token parts', () => {
  it('splits only <6 of [a-z0-9]>.<16 of [a-z0-9]>', () => {
    expect(splitBootstrapToken('abcdef.0123456789abcdef')).toEqual({ id: 'abcdef', secret: '0123456789abcdef' });
    for (const token of ['ABCDEF.0123456789abcdef', 'abcde.0123456789abcdef', 'abcdef.0123456789abcde', 'abcdef:0123456789abcdef', 'abcdef.0123456789abcdef0'])
      expect(splitBootstrapToken(token), token).toBeUndefined();
  });

  it('reads RFC 3339 expirations; anything else is NaN (expired)', () => {
    expect(expirationOf(undefined)).toBeUndefined();
    expect(expirationOf('2030-05-06T07:08:09Z')).toBe(Date.UTC(2030, 4, 6, 7, 8, 9));
    expect(expirationOf('2030-05-06T09:08:09+02:00')).toBe(Date.UTC(2030, 4, 6, 7, 8, 9));
    expect(expirationOf('2030-05-06')).toBeNaN();
  });
});
