import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { UserInfo } from '@skiff/api';
import type { TokenAuthentication } from '@skiff/kernel';
import { userFromClaims } from './claims.js';
import type { IssuerConfig } from './config.js';
import type { IssuerKeys } from './issuer.js';
import { NOT_BEFORE_LEEWAY_SECONDS, REJECTION_CACHE_MS } from './names.js';
import { TokenCache } from './token-cache.js';

/** What one verification found, as cached. */
type Outcome =
  | undefined
  | { user: UserInfo; expiresAt: number }
  /** `retry`: the failure may pass (the issuer unreachable, not discovered yet); never cached. */
  | { error: string; retry?: boolean };

export interface OidcAuthenticatorOptions {
  /** How long an accepted token is taken without verifying it again (never past its `exp`). */
  cacheTTLMs: number;
  cacheSize: number;
  /** Milliseconds since the epoch. */
  now?: () => number;
}

const COMPACT_JWS = /^[\w-]+\.[\w-]+\.[\w-]*$/;

/**
 * Bearer tokens of the configured issuers: JWTs whose signature one of the issuer's keys verifies, meant for one
 * of its audiences, unexpired, with the claims the mapping needs. A token of another issuer, or no JWT at all, is
 * not this authenticator's business (a ServiceAccount token, a static token). Outcomes are cached, so a client
 * that sends the same token with every request costs one verification per cache period, and no request
 * reaches the issuer except when its keys are due to be fetched again.
 */
export class OidcAuthenticator {
  private readonly issuers: Map<string, IssuerKeys>;
  private readonly cache: TokenCache<Outcome>;
  private readonly now: () => number;

  constructor(
    issuers: readonly IssuerKeys[],
    private readonly options: OidcAuthenticatorOptions,
  ) {
    this.issuers = new Map(issuers.map((issuer) => [issuer.config.url, issuer]));
    this.now = options.now ?? Date.now;
    this.cache = new TokenCache(options.cacheSize, this.now);
  }

  /** Undefined when the token is not one of the configured issuers'; otherwise the user or why it is refused. */
  async authenticate(token: string): Promise<TokenAuthentication | undefined> {
    if (!COMPACT_JWS.test(token)) return undefined;
    const outcome = await this.cache.get(
      token,
      () => this.verify(token),
      (found) => {
        if (!found || ('error' in found && found.retry)) return undefined;
        if ('error' in found) return this.now() + Math.min(REJECTION_CACHE_MS, this.options.cacheTTLMs);
        return Math.min(found.expiresAt, this.now() + this.options.cacheTTLMs);
      },
    );
    if (!outcome) return undefined;
    if ('error' in outcome) return { error: outcome.error };
    // A copy: whoever receives the user may add to it without changing what the cache holds.
    const { user } = outcome;
    return { user: { ...{}, ...user, groups: [...user.groups], ...(user.extra ? { extra: structuredClone(user.extra) } : {}) } };
  }

  private async verify(token: string): Promise<Outcome> {
    let claimed: JWTPayload;
    try {
      claimed = decodeJwt(token);
    } catch {
      return undefined;
    }
    const issuer = typeof claimed.iss === 'string' ? this.issuers.get(claimed.iss) : undefined;
    if (!issuer) return undefined;
    const keys = issuer.keys();
    if ('error' in keys) return { error: keys.error, retry: true };
    const { config } = issuer;
    const now = this.now();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: config.url,
        audience: config.audiences,
        algorithms: config.algorithms,
        requiredClaims: ['exp'],
        clockTolerance: NOT_BEFORE_LEEWAY_SECONDS,
        currentDate: new Date(now),
      }));
    } catch (err) {
      return verificationFailure(err, token, config);
    }
    const expiresAt = payload.exp! * 1000;
    if (expiresAt <= now) return { error: expiredMessage(payload.exp!) };
    const mapped = userFromClaims(payload, config.claims);
    if ('error' in mapped) return mapped;
    return { user: mapped.user, expiresAt };
  }
}

function expiredMessage(exp: number): string {
  return `oidc: verify token: token is expired (Token Expiry: ${new Date(exp * 1000).toISOString()})`;
}

/** A reason for the 401 in the words of the check that failed; failures that may pass on their own are marked `retry`. */
function verificationFailure(err: unknown, token: string, config: IssuerConfig): Outcome {
  const error = err as Error & { code?: string; claim?: string; reason?: string; payload?: JWTPayload };
  switch (error.code) {
    case 'ERR_JWT_EXPIRED':
      return { error: expiredMessage(Number(error.payload?.exp)) };
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (error.claim === 'aud')
        return { error: `oidc: verify token: expected audience in ${JSON.stringify(config.audiences)}, got ${JSON.stringify(error.payload?.aud ?? null)}` };
      if (error.claim === 'nbf') return { error: `oidc: verify token: token is not valid before ${new Date(Number(error.payload?.nbf) * 1000).toISOString()}` };
      if (error.claim === 'exp' && error.reason === 'missing') return { error: 'oidc: verify token: token has no "exp" claim' };
      return { error: `oidc: verify token: claim "${error.claim}" ${error.reason ?? 'is invalid'}: ${error.message}` };
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return { error: 'oidc: verify token: failed to verify signature' };
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS': {
      const header = safeHeader(token);
      const which = `kid ${JSON.stringify(header.kid ?? null)}, alg ${JSON.stringify(header.alg ?? null)}`;
      return {
        error:
          error.code === 'ERR_JWKS_NO_MATCHING_KEY'
            ? `oidc: verify token: failed to verify signature: no key of the issuer matches the token (${which})`
            : `oidc: verify token: failed to verify signature: more than one key of the issuer matches the token (${which})`,
      };
    }
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return {
        error: `oidc: verify token: signing algorithm ${JSON.stringify(safeHeader(token).alg ?? null)} is not accepted (accepted: ${config.algorithms.join(', ')})`,
      };
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return { error: `oidc: malformed token: ${error.message}` };
    default:
      return { error: `oidc: verify token: ${error.message}`, retry: true };
  }
}

function safeHeader(token: string): { kid?: string; alg?: string } {
  try {
    return decodeProtectedHeader(token);
  } catch {
    return {};
  }
}
