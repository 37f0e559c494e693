import { createHash, timingSafeEqual } from 'node:crypto';
import type { Secret } from '@skiff/api';
import type { TokenAuthentication } from '@skiff/kernel';
import {
  AUTHENTICATED_GROUP,
  BOOTSTRAP_USER_PREFIX,
  BOOTSTRAPPERS_GROUP,
  EXTRA_GROUP_PATTERN,
  TOKEN_DATA,
  TOKEN_NAMESPACE,
  TOKEN_SECRET_PREFIX,
} from './names.js';
import { hasExpired, readBootstrapToken, splitBootstrapToken, tokenSecretData } from './token-secret.js';

/** Reads a Secret as the API server stores it (data base64-encoded); undefined when there is none. */
export type SecretGetter = (namespace: string, name: string) => Promise<Secret | undefined>;

const USAGE_AUTHENTICATION = `${TOKEN_DATA.USAGE_PREFIX}authentication`;

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
  async authenticate(token: string): Promise<TokenAuthentication | undefined> {
    const parts = splitBootstrapToken(token);
    if (!parts) return undefined;
    const { id } = parts;
    const refused = (why: string) => ({ error: `bootstrap token ${id} ${why}` });
    const secret = await this.get(TOKEN_NAMESPACE, `${TOKEN_SECRET_PREFIX}${id}`);
    const stored = secret && readBootstrapToken(secret);
    // Until the caller has shown the secret, whether the token exists is not theirs to learn.
    if (!secret || !stored || !sameSecret(stored.secret, parts.secret)) return refused('is invalid');
    if (hasExpired(stored, Date.now())) return refused(`has expired (expiration ${tokenSecretData(secret)[TOKEN_DATA.EXPIRATION]})`);
    if (!stored.usages.includes('authentication')) return refused(`may not be used for authentication (${USAGE_AUTHENTICATION} is not "true")`);
    const wrongGroup = stored.extraGroups.find((group) => !EXTRA_GROUP_PATTERN.test(group));
    if (wrongGroup !== undefined)
      return refused(`names the group ${JSON.stringify(wrongGroup)} in ${TOKEN_DATA.EXTRA_GROUPS}, which is not a system:bootstrappers: group`);
    return { user: { username: `${BOOTSTRAP_USER_PREFIX}${id}`, groups: [...new Set([BOOTSTRAPPERS_GROUP, ...stored.extraGroups, AUTHENTICATED_GROUP])] } };
  }
}
