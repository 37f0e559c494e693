import { randomInt } from 'node:crypto';
import { isApiError, RESOURCES, type Secret } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { EXTRA_GROUP_PATTERN, TOKEN_DATA, TOKEN_NAMESPACE, TOKEN_SECRET_PREFIX, TOKEN_SECRET_TYPE } from '@skiff/plugin-authn-bootstrap-token';
import { BootstrapSignerError } from './errors.js';
import {
  DEFAULT_TOKEN_GROUPS,
  DEFAULT_TOKEN_TTL_SECONDS,
  TOKEN_ALPHABET,
  TOKEN_ID_LENGTH,
  TOKEN_SECRET_LENGTH,
  TOKEN_USAGES,
  type TokenUsage,
} from './names.js';

export interface BootstrapTokenOptions {
  /** Seconds until the token expires; 0: never. Default 86 400 (a day, as `kubeadm token create`). */
  ttlSeconds?: number;
  /** Shown by `kubeadm token list`: what the token is for. */
  description?: string;
  /** Default: both `authentication` and `signing`. */
  usages?: readonly TokenUsage[];
  /**
   * Groups the token authenticates in besides `system:bootstrappers`, each starting `system:bootstrappers:`.
   * Default: `system:bootstrappers:kubeadm:default-node-token` for a token used for authentication.
   */
  groups?: readonly string[];
}

export interface CreatedBootstrapToken {
  id: string;
  secret: string;
  /** `<id>.<secret>`: what `skiff join --token` takes. */
  token: string;
  /** RFC 3339; undefined for a token that never expires. */
  expiration?: string;
}

/** How often a freshly drawn id may already be taken before giving up (36⁶ ids: a clash is rare already). */
const ID_ATTEMPTS = 5;

function randomString(length: number): string {
  let value = '';
  for (let i = 0; i < length; i++) value += TOKEN_ALPHABET[randomInt(TOKEN_ALPHABET.length)];
  return value;
}

const invalid = (detail: string) => new BootstrapSignerError('SKIFF_ERR_BOOTSTRAP_TOKEN_OPTIONS', { detail });

/** RFC 3339 in whole seconds, as kubeadm writes `expiration`. */
export function rfc3339(milliseconds: number): string {
  return new Date(milliseconds).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Creates a bootstrap token as `kubeadm token create` does: the Secret `bootstrap-token-<id>` in kube-system, of type
 * `bootstrap.kubernetes.io/token`, with an id and a secret drawn from a cryptographic source. Answers the token; the
 * Secret is the only other place it is kept.
 */
export async function createBootstrapToken(client: ApiClient, options: BootstrapTokenOptions = {}): Promise<CreatedBootstrapToken> {
  const ttlSeconds = options.ttlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 0) throw invalid(`ttlSeconds must be a whole number of seconds ≥ 0 (got ${ttlSeconds})`);
  const usages = [...new Set(options.usages ?? TOKEN_USAGES)];
  const unknown = usages.find((usage) => !TOKEN_USAGES.includes(usage));
  if (unknown !== undefined) throw invalid(`unknown usage ${JSON.stringify(unknown)} (use ${TOKEN_USAGES.join(' or ')})`);
  if (usages.length === 0) throw invalid('a token needs at least one usage');
  const authenticates = usages.includes('authentication');
  const groups = [...new Set(options.groups ?? (authenticates ? DEFAULT_TOKEN_GROUPS : []))];
  if (groups.length > 0 && !authenticates) throw invalid('groups apply only to a token used for authentication');
  const wrongGroup = groups.find((group) => !EXTRA_GROUP_PATTERN.test(group));
  if (wrongGroup !== undefined) throw invalid(`group ${JSON.stringify(wrongGroup)} must match ${EXTRA_GROUP_PATTERN.source}`);

  const expiration = ttlSeconds > 0 ? rfc3339(Date.now() + ttlSeconds * 1000) : undefined;
  for (let attempt = 1; ; attempt++) {
    const id = randomString(TOKEN_ID_LENGTH);
    const secret = randomString(TOKEN_SECRET_LENGTH);
    const stringData: Record<string, string> = { [TOKEN_DATA.ID]: id, [TOKEN_DATA.SECRET]: secret };
    if (expiration) stringData[TOKEN_DATA.EXPIRATION] = expiration;
    if (options.description) stringData[TOKEN_DATA.DESCRIPTION] = options.description;
    for (const usage of usages) stringData[`${TOKEN_DATA.USAGE_PREFIX}${usage}`] = 'true';
    if (groups.length > 0) stringData[TOKEN_DATA.EXTRA_GROUPS] = groups.join(',');
    try {
      await client.create<Secret>(
        RESOURCES.secrets,
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: `${TOKEN_SECRET_PREFIX}${id}`, namespace: TOKEN_NAMESPACE },
          type: TOKEN_SECRET_TYPE,
          stringData,
        },
        TOKEN_NAMESPACE,
      );
      return { id, secret, token: `${id}.${secret}`, ...(expiration ? { expiration } : {}) };
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists') || attempt >= ID_ATTEMPTS) throw err;
    }
  }
}
