import type { Secret } from '@skiff/api';
import { TOKEN_DATA, TOKEN_SECRET_PREFIX, TOKEN_SECRET_TYPE } from './names.js';

const ID = /^[a-z0-9]{6}$/;
const SECRET = /^[a-z0-9]{16}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A bootstrap token as its Secret describes it. */
export interface BootstrapToken {
  id: string;
  secret: string;
  /**
   * When it stops being valid, in milliseconds since the epoch: undefined when it never expires, NaN when the
   * Secret's `expiration` is not an RFC 3339 time (such a token counts as expired, as in Kubernetes).
   */
  expiration: number | undefined;
  /** The usages set to "true": `signing`, `authentication`. */
  usages: string[];
}

export function isBootstrapTokenSecret(secret: Secret): boolean {
  return secret.type === TOKEN_SECRET_TYPE;
}

/** A `expiration` value read as `BootstrapToken.expiration` reads it. */
export function expirationOf(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  return RFC3339.test(value) ? Date.parse(value) : NaN;
}

/** Whether the token is past its expiration at `now` (milliseconds since the epoch). */
export function hasExpired(token: Pick<BootstrapToken, 'expiration'>, now: number): boolean {
  return token.expiration !== undefined && !(token.expiration > now);
}

export function decodedData(secret: Secret): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) data[key] = Buffer.from(value, 'base64').toString('utf8');
  return data;
}

/**
 * The token a Secret holds, or undefined when it is no well-formed bootstrap token: another type, a name that is
 * not `bootstrap-token-<token-id>`, an id or secret of the wrong shape, or a Secret being deleted.
 */
export function readBootstrapToken(secret: Secret): BootstrapToken | undefined {
  if (!isBootstrapTokenSecret(secret) || secret.metadata.deletionTimestamp) return undefined;
  const data = decodedData(secret);
  const id = data[TOKEN_DATA.ID] ?? '';
  const tokenSecret = data[TOKEN_DATA.SECRET] ?? '';
  if (!ID.test(id) || !SECRET.test(tokenSecret) || secret.metadata.name !== `${TOKEN_SECRET_PREFIX}${id}`) return undefined;
  const usages = Object.entries(data)
    .filter(([key, value]) => key.startsWith(TOKEN_DATA.USAGE_PREFIX) && value === 'true')
    .map(([key]) => key.slice(TOKEN_DATA.USAGE_PREFIX.length));
  return { id, secret: tokenSecret, expiration: expirationOf(data[TOKEN_DATA.EXPIRATION]), usages };
}
