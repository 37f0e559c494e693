export const PLUGIN_NAME = '@skiff/plugin-authn-oidc';

/** Signing algorithms accepted unless `signingAlgorithms` says otherwise: the asymmetric ones of RFC 7518 (never `none` or HMAC). */
export const DEFAULT_SIGNING_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'] as const;

/** Where an issuer's discovery document is, below its URL (OpenID Connect Discovery 1.0). */
export const DISCOVERY_PATH = '/.well-known/openid-configuration';

/** A token may be used this long before its `nbf` (the issuer's clock may run ahead); `exp` has no leeway. */
export const NOT_BEFORE_LEEWAY_SECONDS = 300;

/** Discovery is tried again after a failure, waiting this long at first and doubling up to the maximum. */
export const DISCOVERY_RETRY_MS = { first: 1_000, max: 30_000 };

/** A start waits this long at most for the first discovery of an issuer; it goes on in the background. */
export const START_WAIT_MS = 5_000;

/** How long discovery and key requests to the issuer may take. */
export const ISSUER_REQUEST_TIMEOUT_MS = 10_000;

/** After a key set fetch, a token with an unknown `kid` makes the next fetch only once this has passed. */
export const JWKS_COOLDOWN_MS = 30_000;

/** Keys are fetched again in the background this often. */
export const JWKS_REFRESH_MS = 10 * 60_000;

/** A rejected token is remembered at most this long (an accepted one for `cacheTTLSeconds`, never past its `exp`). */
export const REJECTION_CACHE_MS = 10_000;
