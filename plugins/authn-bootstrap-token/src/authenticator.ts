import { createHash, timingSafeEqual } from 'node:crypto';
import type { Secret, UserInfo } from '@skiff/api';
import {
  AUTHENTICATED_GROUP,
  BOOTSTRAP_TOKEN_PATTERN,
  BOOTSTRAP_USER_PREFIX,
  BOOTSTRAPPERS_GROUP,
  EXTRA_GROUP_PATTERN,
  TOKEN_DATA,
  TOKEN_NAMESPACE,
  TOKEN_SECRET_PREFIX,
  TOKEN_SECRET_TYPE,
} from './names.js';

/** Reads a Secret as the API server stores it (data base64-encoded); undefined when there is none. */
export type SecretGetter = (namespace: string, name: string) => Promise<Secret | undefined>;

export type BootstrapTokenAuthentication = { user: UserInfo } | { error: string };

/** The two halves of a bootstrap token, or undefined for a bearer token of another shape. */
export function splitBootstrapToken(token: string): { id: string; secret: string } | undefined {
  const match = BOOTSTRAP_TOKEN_PATTERN.exec(token);
  return match ? { id: match[1]!, secret: match[2]! } : undefined;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * When a token stops being valid, in milliseconds since the epoch: undefined when it never expires, NaN when its
 * `expiration` is not an RFC 3339 time (such a token counts as expired, as in Kubernetes).
 */
export function expirationOf(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  return RFC3339.test(value) ? Date.parse(value) : NaN;
}

function decodedData(secret: Secret): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) data[key] = Buffer.from(value, 'base64').toString('utf8');
  return data;
}

/** Equal in time that does not depend on where the strings differ, nor on their lengths. */
function sameSecret(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Accepts bootstrap tokens (`<id>.<secret>`) whose Secret `bootstrap-token-<id>` in kube-system holds the same
 * secret, allows authentication and has not expired: the user `system:bootstrap:<id>` in `system:bootstrappers`
 * and the token's extra groups.
 */
export class BootstrapTokenAuthenticator {
  constructor(private readonly get: SecretGetter) {}

  /** Undefined for a token of another shape (another authenticator may know it); otherwise the user, or why the token is refused. */
  async authenticate(token: string): Promise<BootstrapTokenAuthentication | undefined> {
    const parts = splitBootstrapToken(token);
    if (!parts) return undefined;
    const { id } = parts;
    const refused = (why: string) => ({ error: `bootstrap token ${id} ${why}` });
    const secret = await this.get(TOKEN_NAMESPACE, `${TOKEN_SECRET_PREFIX}${id}`);
    const data = secret?.type === TOKEN_SECRET_TYPE && !secret.metadata.deletionTimestamp ? decodedData(secret) : undefined;
    // Until the caller has shown the secret, whether the token exists is not theirs to learn.
    if (!data || data[TOKEN_DATA.ID] !== id || !sameSecret(data[TOKEN_DATA.SECRET] ?? '', parts.secret)) return refused('is invalid');
    const expiration = expirationOf(data[TOKEN_DATA.EXPIRATION]);
    if (expiration !== undefined && !(expiration > Date.now())) return refused(`has expired (expiration ${data[TOKEN_DATA.EXPIRATION]})`);
    if (data[TOKEN_DATA.USAGE_AUTHENTICATION] !== 'true')
      return refused(`may not be used for authentication (${TOKEN_DATA.USAGE_AUTHENTICATION} is not "true")`);
    const extraGroups = (data[TOKEN_DATA.EXTRA_GROUPS] ?? '')
      .split(',')
      .map((group) => group.trim())
      .filter(Boolean);
    const wrongGroup = extraGroups.find((group) => !EXTRA_GROUP_PATTERN.test(group));
    if (wrongGroup !== undefined)
      return refused(`names the group ${JSON.stringify(wrongGroup)} in ${TOKEN_DATA.EXTRA_GROUPS}, which is not a system:bootstrappers: group`);
    return { user: { username: `${BOOTSTRAP_USER_PREFIX}${id}`, groups: [...new Set([BOOTSTRAPPERS_GROUP, ...extraGroups, AUTHENTICATED_GROUP])] } };
  }
}
