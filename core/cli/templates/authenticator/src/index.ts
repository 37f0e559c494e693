import { createHash } from 'node:crypto';
import type { UserInfo } from '@skiff/api';
import { CHAIN_STAGE, definePlugin, packageInfo, type AuthnRequest, type AuthnResult, type PluginOptions } from '@skiff/kernel';

/** The npm package name: cluster configs name the plugin by it, and its hook tap carries it. */
export const PLUGIN_NAME = '{{package}}';

/** Every authenticated user is in this group, as in Kubernetes. */
const AUTHENTICATED_GROUP = 'system:authenticated';

/**
 * An authenticator: API keys sent in a request header (`X-Api-Key: <key>` by default), each mapped to a
 * user and groups. The authenticate chain stops at the first tap that returns a user; a request without
 * the header passes on to the next authenticator, and one with an unknown key is refused with a reason
 * (401), so it never falls through to anonymous access.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    required: ['keys'],
    properties: {
      header: { type: 'string', default: 'x-api-key', description: 'the request header that carries the key' },
      keys: {
        type: 'array',
        description: 'the accepted keys and who each one is',
        items: {
          type: 'object',
          required: ['key', 'username'],
          properties: {
            key: { type: 'string' },
            username: { type: 'string' },
            groups: { type: 'array', items: { type: 'string' }, default: [] },
          },
        },
      },
    },
  },
  apply(kernel, options) {
    const authenticate = createAuthenticator(options);
    kernel.hooks.authenticate.tap({ name: PLUGIN_NAME, stage: CHAIN_STAGE.TOKEN }, authenticate);
  },
});

export default plugin;

/** The options `apply` receives, with defaults filled in. */
export type ApiKeyOptions = PluginOptions<typeof plugin>;

/** Keys are looked up by their hash, so the lookup takes no longer for a nearly right key than for a wrong one. */
const digest = (key: string) => createHash('sha256').update(key).digest('hex');

/** The authenticate tap: a user for a known key, a reason for an unknown one, nothing without the header. */
export function createAuthenticator({ header, keys }: ApiKeyOptions): (request: AuthnRequest) => AuthnResult {
  const users = new Map<string, UserInfo>(
    keys.map(({ key, username, groups }) => [digest(key), { username, groups: [...new Set([...groups, AUTHENTICATED_GROUP])] }]),
  );
  const name = header.toLowerCase(); // request headers arrive lower-cased
  return (request) => {
    const key = request.headers[name];
    if (key === undefined) return undefined;
    const user = users.get(digest(key.trim()));
    if (user) return { user: structuredClone(user) };
    request.errors.push(`invalid API key in the ${header} header`);
    return undefined;
  };
}
