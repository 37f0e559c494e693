import type { Secret } from '@skiff/api';
import { BOOTSTRAP_TOKEN_PATTERN, TOKEN_DATA, TOKEN_SECRET_PREFIX, TOKEN_SECRET_TYPE } from './names.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A bootstrap token as its Secret describes it. */
export interface BootstrapToken {
  id: string;
  secret: string;
  /** As {@link expirationOf} reads the Secret's `expiration`. */
  expiration: number | undefined;
  /** The usages set to "true": `signing`, `authentication`. */
  usages: string[];
  /** The groups `auth-extra-groups` lists, as written (whether each is allowed is the authenticator's question). */
  extraGroups: string[];
}

/** The two halves of a bootstrap token, or undefined for a bearer token of another shape. */
export function splitBootstrapToken(token: string): { id: string; secret: string } | undefined {
  const match = BOOTSTRAP_TOKEN_PATTERN.exec(token);
  return match ? { id: match[1]!, secret: match[2]! } : undefined;
}

/** Whether the Secret is of the bootstrap token type, however well-formed its name and data. */
export function isBootstrapTokenSecret(secret: Secret): boolean {
  return secret.type === TOKEN_SECRET_TYPE;
}

/**
 * When a token stops being valid, in milliseconds since the epoch: undefined when it never expires, NaN when its
 * `expiration` is not an RFC 3339 time (such a token counts as expired, as in Kubernetes).
 */
export function expirationOf(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  return RFC3339.test(value) ? Date.parse(value) : NaN;
}

/** Whether the token is past its expiration at `now` (milliseconds since the epoch). */
export function hasExpired(token: Pick<BootstrapToken, 'expiration'>, now: number): boolean {
  return token.expiration !== undefined && !(token.expiration > now);
}

/** The Secret's data as text. */
export function tokenSecretData(secret: Secret): Record<string, string> {
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
  const data = tokenSecretData(secret);
  const parts = splitBootstrapToken(`${data[TOKEN_DATA.ID] ?? ''}.${data[TOKEN_DATA.SECRET] ?? ''}`);
  if (!parts || secret.metadata.name !== `${TOKEN_SECRET_PREFIX}${parts.id}`) return undefined;
  const usages = Object.entries(data)
    .filter(([key, value]) => key.startsWith(TOKEN_DATA.USAGE_PREFIX) && value === 'true')
    .map(([key]) => key.slice(TOKEN_DATA.USAGE_PREFIX.length));
  const extraGroups = (data[TOKEN_DATA.EXTRA_GROUPS] ?? '')
    .split(',')
    .map((group) => group.trim())
    .filter(Boolean);
  return { ...{}, ...parts, expiration: expirationOf(data[TOKEN_DATA.EXPIRATION]), usages, extraGroups };
}
