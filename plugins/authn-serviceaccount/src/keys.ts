import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { errorMessage } from '@skiff/api';
import { ServiceAccountTokenError } from './errors.js';

export type SigningAlgorithm = 'RS256' | 'ES256';

/** A key that signs tokens, with the JWS algorithm its type implies and its key id. */
export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  alg: SigningAlgorithm;
  /** The `kid` of tokens and of the JWKS entry: base64url SHA-256 of the public key's DER (SPKI), as Kubernetes derives it. */
  kid: string;
}

/** RSA keys of at least 2048 bits sign with RS256, P-256 keys with ES256; anything else is refused. */
function algorithmOf(key: KeyObject): SigningAlgorithm {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa') {
    if ((details.modulusLength ?? 0) < 2048) throw new Error(`an RSA key needs at least 2048 bits (got ${details.modulusLength})`);
    return 'RS256';
  }
  if (key.asymmetricKeyType === 'ec' && details.namedCurve === 'prime256v1') return 'ES256';
  const curve = details.namedCurve ? ` on ${details.namedCurve}` : '';
  throw new Error(`unsupported key type ${key.asymmetricKeyType}${curve} (use RSA ≥ 2048 bits for RS256 or EC P-256 for ES256)`);
}

/** A signing key from a private key in PEM (PKCS#1, PKCS#8 or SEC1). */
export function signingKeyFromPem(pem: string): SigningKey {
  const privateKey = createPrivateKey(pem);
  const publicKey = createPublicKey(privateKey);
  const alg = algorithmOf(privateKey);
  const kid = createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64url');
  return { privateKey, publicKey, alg, kid };
}

/**
 * The key in `file`, created on first start: an RSA 2048 key (PKCS#8 PEM, mode 0600). Several processes
 * starting at once on one data dir agree on one key: only the first write succeeds.
 */
export function ensureSigningKey(file: string): SigningKey {
  try {
    if (!existsSync(file)) {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      try {
        writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    return signingKeyFromPem(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ServiceAccountTokenError('SKIFF_ERR_SERVICE_ACCOUNT_KEY', { file, detail: errorMessage(err) }, { cause: err });
  }
}

/** The public half as a JSON Web Key, for /openid/v1/jwks. */
export function publicJwk(key: SigningKey): JsonWebKey {
  return { use: 'sig', kid: key.kid, alg: key.alg, ...key.publicKey.export({ format: 'jwk' }) };
}
