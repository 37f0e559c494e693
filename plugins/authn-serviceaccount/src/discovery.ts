import type { JsonWebKey } from 'node:crypto';
import type { RouteDefinition } from '@skiff/kernel';
import { publicJwk, type SigningKey } from './keys.js';
import { JWKS_PATH, OPENID_CONFIGURATION_PATH } from './names.js';

/** The issuer's JWKS address unless configured: the issuer URL with /openid/v1/jwks. */
export function defaultJwksUri(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}${JWKS_PATH}`;
}

/** The OpenID Provider configuration relying parties read to verify service account tokens without asking the cluster. */
export function openidConfiguration(issuer: string, jwksUri: string, keys: readonly SigningKey[]): Record<string, unknown> {
  return {
    issuer,
    jwks_uri: jwksUri,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [...new Set(keys.map((key) => key.alg))].sort(),
  };
}

export function jwks(keys: readonly SigningKey[]): { keys: JsonWebKey[] } {
  return { keys: keys.map(publicJwk) };
}

/** GET /.well-known/openid-configuration and GET /openid/v1/jwks. */
export function discoveryRoutes(issuer: string, jwksUri: string, keys: readonly SigningKey[]): RouteDefinition[] {
  const configuration = openidConfiguration(issuer, jwksUri, keys);
  const keySet = jwks(keys);
  return [
    {
      method: 'GET',
      path: OPENID_CONFIGURATION_PATH,
      handler: async () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: configuration }),
    },
    { method: 'GET', path: JWKS_PATH, handler: async () => ({ status: 200, headers: { 'content-type': 'application/jwk-set+json' }, body: keySet }) },
  ];
}
