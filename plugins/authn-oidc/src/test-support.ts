import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { ensurePki } from '@skiff/apiserver';

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

/** A real OpenID Connect issuer over HTTPS on 127.0.0.1, with a CA of its own: discovery document and key set. */
export interface TestIssuer {
  url: string;
  /** The CA the issuer's serving certificate is signed by. */
  caPem: string;
  /** The serving certificate, its key and CA: another issuer started with them is trusted alike. */
  tls: IssuerTls;
  /** Requests served, per path. */
  requests: Map<string, number>;
  /** The keys the key set publishes. */
  published: SigningKey[];
  /** Signs a token with the first published key unless told otherwise; `iss`, `iat` and a one-hour `exp` are filled in. */
  sign(claims: JWTPayload, options?: { key?: SigningKey; header?: Record<string, unknown> }): Promise<string>;
  /** A key the issuer does not publish (or publishes after `publish`). */
  newKey(kid: string, alg?: string): Promise<SigningKey>;
  close(): Promise<void>;
}

export interface IssuerTls {
  caPem: string;
  certPem: string;
  keyPem: string;
}

export async function newSigningKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export interface TestIssuerOptions {
  /** Below the host: the issuer URL is https://127.0.0.1:<port><path>. Default /idp. */
  path?: string;
  /** A port to listen on (default: a free one). */
  port?: number;
  /** The `issuer` the discovery document names, when it should not be the issuer's own URL. */
  discoveryIssuer?: string;
  /** Keys to publish (default: one new RS256 key, kid "key-1"). */
  keys?: SigningKey[];
  /** Serving certificate (default: a new CA and certificate for 127.0.0.1). */
  tls?: IssuerTls;
}

export async function startTestIssuer(options: TestIssuerOptions = {}): Promise<TestIssuer> {
  const tls = options.tls ?? newTls();
  const path = options.path ?? '/idp';
  const requests = new Map<string, number>();
  const published = options.keys ?? [await newSigningKey('key-1')];
  let url = '';
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const requested = new URL(req.url ?? '/', 'https://issuer').pathname;
    requests.set(requested, (requests.get(requested) ?? 0) + 1);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (requested === `${path}/.well-known/openid-configuration`)
      send(200, { issuer: options.discoveryIssuer ?? url, jwks_uri: `${url}/keys`, id_token_signing_alg_values_supported: ['RS256', 'ES256'] });
    else if (requested === `${path}/keys`) send(200, { keys: published.map((key) => key.jwk) });
    else send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return {
    url,
    caPem: tls.caPem,
    tls,
    requests,
    published,
    newKey: newSigningKey,
    sign(claims, signOptions = {}) {
      const key = signOptions.key ?? published[0]!;
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: url, iat: now, exp: now + 3600, ...claims })
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...signOptions.header })
        .sign(key.privateKey);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A new CA and a serving certificate it signed for 127.0.0.1 and localhost. */
export function newTls(): IssuerTls {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-oidc-issuer-'));
  try {
    const pki = ensurePki(dir, '127.0.0.1');
    return { caPem: pki.caPem, certPem: pki.certPem, keyPem: pki.keyPem };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
