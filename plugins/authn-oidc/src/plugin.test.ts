import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kernel, type AuthnRequest } from '@skiff/kernel';
import plugin from './index.js';
import { startTestIssuer, type TestIssuer } from './test-support.js';

let issuer: TestIssuer;
let kernel: Kernel;

beforeAll(async () => {
  issuer = await startTestIssuer();
  kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin, {
    jwt: [
      {
        issuer: { url: issuer.url, audiences: ['skiff', 'kubectl'], certificateAuthority: issuer.caPem },
        claimMappings: { groups: { claim: 'groups', prefix: 'oidc:' }, uid: { claim: 'sub' } },
        claimValidationRules: [{ claim: 'tenant', requiredValue: 'blue' }],
      },
    ],
  });
  await kernel.start();
});
afterAll(async () => {
  await kernel?.stop();
  await issuer?.close();
});

async function authenticate(token: string): Promise<{ result: Awaited<ReturnType<Kernel['hooks']['authenticate']['promise']>>; errors: string[] }> {
  const request: AuthnRequest = { headers: { authorization: `Bearer ${token}` }, errors: [] };
  const result = await kernel.hooks.authenticate.promise(request);
  return { result, errors: request.errors };
}

const claims = { sub: 'alice', aud: 'skiff', tenant: 'blue', groups: ['dev', 'ops'] };

describe('tokens of the configured issuer', () => {
  it('become the mapped user: <issuer>#sub, prefixed groups, uid, system:authenticated', async () => {
    const { result, errors } = await authenticate(await issuer.sign(claims));
    expect(errors).toEqual([]);
    expect(result).toEqual({ user: { username: `${issuer.url}#alice`, uid: 'alice', groups: ['oidc:dev', 'oidc:ops', 'system:authenticated'] } });
  });

  it('accept any configured audience, and an audience list', async () => {
    expect((await authenticate(await issuer.sign({ ...claims, aud: 'kubectl' }))).result?.user.username).toBe(`${issuer.url}#alice`);
    expect((await authenticate(await issuer.sign({ ...claims, aud: ['other', 'skiff'] }))).result?.user.username).toBe(`${issuer.url}#alice`);
  });

  it('take a single group as a string', async () => {
    const { result } = await authenticate(await issuer.sign({ ...claims, groups: 'admins' }));
    expect(result?.user.groups).toEqual(['oidc:admins', 'system:authenticated']);
  });

  it('are refused when expired, with the expiry', async () => {
    const exp = Math.floor(Date.now() / 1000) - 60;
    const { result, errors } = await authenticate(await issuer.sign({ ...claims, iat: exp - 3600, exp }));
    expect(result).toBeUndefined();
    expect(errors).toEqual([`oidc: verify token: token is expired (Token Expiry: ${new Date(exp * 1000).toISOString()})`]);
  });

  it('are refused a few seconds after exp too: no leeway for expiry', async () => {
    const exp = Math.floor(Date.now() / 1000) - 2;
    const { errors } = await authenticate(await issuer.sign({ ...claims, exp }));
    expect(errors[0]).toMatch(/^oidc: verify token: token is expired/);
  });

  it('are refused without exp', async () => {
    const { errors } = await authenticate(await issuer.sign({ ...claims, exp: undefined }));
    expect(errors).toEqual(['oidc: verify token: token has no "exp" claim']);
  });

  it('are refused for another audience', async () => {
    const { result, errors } = await authenticate(await issuer.sign({ ...claims, aud: 'someone-else' }));
    expect(result).toBeUndefined();
    expect(errors).toEqual(['oidc: verify token: expected audience in ["skiff","kubectl"], got "someone-else"']);
  });

  it('are refused when signed by a key the issuer does not publish', async () => {
    const stranger = await issuer.newKey('stranger');
    const { errors } = await authenticate(await issuer.sign(claims, { key: stranger }));
    expect(errors).toEqual(['oidc: verify token: failed to verify signature: no key of the issuer matches the token (kid "stranger", alg "RS256")']);
  });

  it('are refused when another key signs under the published kid', async () => {
    const impostor = await issuer.newKey('key-1');
    const { errors } = await authenticate(await issuer.sign(claims, { key: impostor }));
    expect(errors).toEqual(['oidc: verify token: failed to verify signature']);
  });

  it('are refused with a tampered payload', async () => {
    const [header, , signature] = (await issuer.sign(claims)).split('.');
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'root', iss: issuer.url, exp: Math.floor(Date.now() / 1000) + 60 })).toString('base64url');
    const { errors } = await authenticate(`${header}.${forged}.${signature}`);
    expect(errors).toEqual(['oidc: verify token: failed to verify signature']);
  });

  it('are refused when signed with HMAC or unsigned', async () => {
    const now = Math.floor(Date.now() / 1000);
    const hmac = await new SignJWT({ ...claims, iss: issuer.url, exp: now + 60 })
      .setProtectedHeader({ alg: 'HS256', kid: 'key-1' })
      .sign(new TextEncoder().encode('a shared secret that is long enough'));
    expect((await authenticate(hmac)).errors).toEqual([
      'oidc: verify token: signing algorithm "HS256" is not accepted (accepted: RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512)',
    ]);
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ ...claims, iss: issuer.url, exp: now + 60 })).toString('base64url')}.`;
    const unsigned = await authenticate(none);
    expect(unsigned.result).toBeUndefined();
    expect(unsigned.errors).toEqual([
      'oidc: verify token: signing algorithm "none" is not accepted (accepted: RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512)',
    ]);
  });

  it('are refused without a required claim, or with another value', async () => {
    expect((await authenticate(await issuer.sign({ ...claims, tenant: undefined }))).errors).toEqual(['oidc: required claim "tenant" not present']);
    expect((await authenticate(await issuer.sign({ ...claims, tenant: 'red' }))).errors).toEqual([
      'oidc: required claim "tenant" value does not match: got "red", want "blue"',
    ]);
  });

  it('are refused without the username claim', async () => {
    expect((await authenticate(await issuer.sign({ ...claims, sub: undefined }))).errors).toEqual(['oidc: claim "sub" not present']);
  });

  it('verify each token once: the issuer sees no request per token', async () => {
    const before = new Map(issuer.requests);
    const token = await issuer.sign({ ...claims, sub: 'bob' });
    const results = await Promise.all(Array.from({ length: 50 }, () => authenticate(token)));
    expect(new Set(results.map(({ result }) => result?.user.username))).toEqual(new Set([`${issuer.url}#bob`]));
    expect(issuer.requests).toEqual(before);
  });
});

describe('other bearer tokens', () => {
  it('pass on silently: another issuer, a malformed JWT, a static token', async () => {
    const other = await new SignJWT({ ...claims, iss: 'https://kubernetes.default.svc.cluster.local' })
      .setProtectedHeader({ alg: 'RS256', kid: 'key-1' })
      .sign(issuer.published[0]!.privateKey);
    for (const token of [other, 'abc.def.ghi', 'static-token-123', 'eyJhbGciOiJub25lIn0.e30.']) {
      expect(await authenticate(token), token).toEqual({ result: undefined, errors: [] });
    }
  });

  it('and requests without a bearer token', async () => {
    const request: AuthnRequest = { headers: { authorization: 'Basic YWxpY2U6c2VjcmV0' }, errors: [] };
    expect(await kernel.hooks.authenticate.promise(request)).toBeUndefined();
    expect(request.errors).toEqual([]);
  });
});

describe('claim mappings', () => {
  it('take the email claim without a prefix, refusing unverified addresses', async () => {
    const emailIssuer = await startTestIssuer({ path: '/email' });
    const emails = new Kernel({ config: { logLevel: 'silent' } }).use(plugin, {
      jwt: [
        { issuer: { url: emailIssuer.url, audiences: ['skiff'], certificateAuthority: emailIssuer.caPem }, claimMappings: { username: { claim: 'email' } } },
      ],
    });
    await emails.start();
    try {
      const run = async (payload: Record<string, unknown>) => {
        const request: AuthnRequest = { headers: { authorization: `Bearer ${await emailIssuer.sign({ aud: 'skiff', ...payload })}` }, errors: [] };
        return { result: await emails.hooks.authenticate.promise(request), errors: request.errors };
      };
      expect((await run({ email: 'jane@example.com', email_verified: true })).result).toEqual({
        user: { username: 'jane@example.com', groups: ['system:authenticated'] },
      });
      expect((await run({ email: 'jane@example.com' })).result?.user.username).toBe('jane@example.com');
      expect((await run({ email: 'jane@example.com', email_verified: false })).errors).toEqual(['oidc: email not verified']);
    } finally {
      await emails.stop();
      await emailIssuer.close();
    }
  });

  it('use the configured username prefix, "" for none', async () => {
    const prefixed = await startTestIssuer({ path: '/prefixed' });
    const kernels = ['sso:', ''].map((prefix) =>
      new Kernel({ config: { logLevel: 'silent' } }).use(plugin, {
        jwt: [
          {
            issuer: { url: prefixed.url, audiences: ['skiff'], certificateAuthority: prefixed.caPem },
            claimMappings: { username: { claim: 'preferred_username', prefix } },
          },
        ],
      }),
    );
    try {
      const token = await prefixed.sign({ aud: 'skiff', preferred_username: 'jane' });
      const names = [];
      for (const k of kernels) {
        await k.start();
        names.push((await k.hooks.authenticate.promise({ headers: { authorization: `Bearer ${token}` }, errors: [] }))?.user.username);
      }
      expect(names).toEqual(['sso:jane', 'jane']);
    } finally {
      for (const k of kernels) await k.stop();
      await prefixed.close();
    }
  });
});

describe('an AuthenticationConfiguration file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-oidc-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, document: unknown) => {
    writeFileSync(join(dir, name), stringify(document));
    return name;
  };
  const use = (configFile: string) => new Kernel({ config: { logLevel: 'silent', rootDir: dir } }).use(plugin, { configFile });

  it("gives the jwt list, its CA files taken from the file's folder", async () => {
    writeFileSync(join(dir, 'idp-ca.crt'), issuer.caPem);
    const file = write('authn.yaml', {
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AuthenticationConfiguration',
      jwt: [
        {
          issuer: { url: issuer.url, audiences: ['cluster-a'], audienceMatchPolicy: 'MatchAny', certificateAuthorityFile: 'idp-ca.crt' },
          claimMappings: { username: { claim: 'sub', prefix: 'idp:' }, groups: { claim: 'roles', prefix: '' } },
        },
      ],
    });
    const fromFile = use(file);
    await fromFile.start();
    try {
      const token = await issuer.sign({ sub: 'carol', aud: 'cluster-a', roles: ['admins'] });
      expect(await fromFile.hooks.authenticate.promise({ headers: { authorization: `Bearer ${token}` }, errors: [] })).toEqual({
        user: { username: 'idp:carol', groups: ['admins', 'system:authenticated'] },
      });
    } finally {
      await fromFile.stop();
    }
  });

  it('is refused with what upstream has and Skiff does not: CEL expressions, anonymous, another kind', () => {
    const base = { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthenticationConfiguration' };
    const cel = write('cel.yaml', {
      ...base,
      jwt: [{ issuer: { url: issuer.url, audiences: ['a'] }, claimMappings: { username: { expression: 'claims.sub' } } }],
    });
    expect(() => use(cel)).toThrow(`option "configFile" (${join(dir, cel)}) unknown option "jwt[0].claimMappings.username.expression" (known: claim, prefix)`);
    const anonymous = write('anonymous.yaml', { ...base, anonymous: { enabled: true } });
    expect(() => use(anonymous)).toThrow('has anonymous: only jwt is read here');
    const kind = write('kind.yaml', { apiVersion: 'v1', kind: 'Config' });
    expect(() => use(kind)).toThrow('must be an AuthenticationConfiguration of apiserver.config.k8s.io/v1');
    expect(() => use('missing.yaml')).toThrow(`option "configFile" (${join(dir, 'missing.yaml')}) cannot be read: ENOENT`);
    writeFileSync(join(dir, 'broken.yaml'), 'jwt:\n  - issuer: x: y\n');
    expect(() => use('broken.yaml')).toThrow(/^[^\n]*broken\.yaml\) cannot be parsed: [^\n]*line 2[^\n]*$/);
    expect(() => new Kernel({ config: { logLevel: 'silent', rootDir: dir } }).use(plugin, { configFile: cel, jwt: [] })).toThrow(
      'option "configFile" cannot be combined with jwt',
    );
  });
});

describe('options', () => {
  const use = (options: unknown) => () => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, options);
  const https = { url: 'https://idp.example.com', audiences: ['skiff'] };

  it('need at least one issuer', () => {
    expect(use({})).toThrow('plugin "@skiff/plugin-authn-oidc": option "jwt" is required (or configFile)');
    expect(use({ jwt: [] })).toThrow('plugin "@skiff/plugin-authn-oidc": option "jwt" must name at least one issuer');
  });

  it('refuse an http issuer, a repeated one, no audiences', () => {
    expect(use({ jwt: [{ issuer: { ...https, url: 'http://idp.example.com' } }] })).toThrow(
      'plugin "@skiff/plugin-authn-oidc": option "jwt[0].issuer.url" must be an https URL (got "http://idp.example.com")',
    );
    expect(use({ jwt: [{ issuer: https }, { issuer: https }] })).toThrow(
      'option "jwt[1].issuer.url" names an issuer already configured (https://idp.example.com)',
    );
    expect(use({ jwt: [{ issuer: { ...https, audiences: [] } }] })).toThrow('option "jwt[0].issuer.audiences" must name at least one audience');
    expect(use({ jwt: [{ issuer: { url: https.url } }] })).toThrow('option "jwt[0].issuer.audiences" is required');
  });

  it('check the CA: PEM, from a file that exists, not both', () => {
    expect(use({ jwt: [{ issuer: { ...https, certificateAuthority: 'not a pem' } }] })).toThrow(
      'option "jwt[0].issuer.certificateAuthority" must hold PEM certificates (-----BEGIN CERTIFICATE-----)',
    );
    expect(use({ jwt: [{ issuer: { ...https, certificateAuthorityFile: '/nonexistent/ca.crt' } }] })).toThrow(
      'option "jwt[0].issuer.certificateAuthorityFile" cannot be read: ENOENT (/nonexistent/ca.crt)',
    );
    expect(use({ jwt: [{ issuer: { ...https, certificateAuthority: issuer.caPem, certificateAuthorityFile: 'ca.crt' } }] })).toThrow(
      'option "jwt[0].issuer" may set certificateAuthority or certificateAuthorityFile, not both',
    );
  });

  it('refuse symmetric algorithms and unknown keys', () => {
    expect(use({ jwt: [{ issuer: https }], signingAlgorithms: ['HS256'] })).toThrow('option "signingAlgorithms[0]" must be one of RS256');
    expect(use({ jwt: [{ issuer: https, claimMapping: {} }] })).toThrow('unknown option "jwt[0].claimMapping"');
  });
});
