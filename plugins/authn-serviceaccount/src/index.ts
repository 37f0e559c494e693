import { resolve } from 'node:path';
import { authenticateBearerToken, CHAIN_STAGE, definePlugin, LIFECYCLE_STAGE, packageInfo, type PluginOptions } from '@skiff/kernel';
import { ServiceAccountTokenAuthenticator } from './authenticator.js';
import { defaultJwksUri, discoveryRoutes } from './discovery.js';
import { ensureSigningKey } from './keys.js';
import type { ObjectGetter } from './lookup.js';
import { DEFAULT_ISSUER, DEFAULT_KEY_FILE, MIN_EXPIRATION_SECONDS, PLUGIN_NAME } from './names.js';
import { tokenRequestHandler } from './token-request.js';

/**
 * ServiceAccount tokens: the `serviceaccounts/token` subresource (TokenRequest, `kubectl create token`)
 * issues signed JWTs, and an authenticator accepts them while they are unexpired, meant for this server,
 * and the account (and the pod, secret or node they are bound to) still exists.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['apiExtensions'],
  options: {
    type: 'object',
    properties: {
      issuer: { type: 'string', default: DEFAULT_ISSUER, description: 'The `iss` of issued tokens; only tokens of this issuer are accepted' },
      audiences: {
        type: 'array',
        items: { type: 'string' },
        description: 'Audiences the API server accepts, and the `aud` of tokens whose request names none (default: [issuer])',
      },
      keyFile: {
        type: 'string',
        default: DEFAULT_KEY_FILE,
        description: 'Signing key (PEM; RSA ≥ 2048 bits for RS256 or EC P-256 for ES256), created as RSA 2048 when missing; relative to the data dir',
      },
      maxExpirationSeconds: {
        type: 'integer',
        minimum: MIN_EXPIRATION_SECONDS,
        description: 'Longest lifetime of an issued token; longer requests are shortened to it (default: no limit)',
      },
      discovery: { type: 'boolean', default: true, description: 'Serve /.well-known/openid-configuration and /openid/v1/jwks' },
      jwksUri: { type: 'string', description: 'The jwks_uri of the discovery document (default: <issuer>/openid/v1/jwks)' },
    },
  },
  apply(kernel, options) {
    const audiences = options.audiences?.length ? options.audiences : [options.issuer];
    let authenticator: ServiceAccountTokenAuthenticator | undefined;

    // Before the API server starts serving: the key exists and the subresource is answered from its first request on.
    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.API_SERVER - 10, {
      start() {
        const key = ensureSigningKey(resolve(kernel.config.rootDir ?? process.cwd(), kernel.config.dataDir, options.keyFile));
        const extensions = kernel.resolve('apiExtensions');
        const get: ObjectGetter = (resource, namespace, name) => extensions.get(resource, namespace, name);
        extensions.handle(
          { group: '', resource: 'serviceaccounts', subresource: 'token', verb: 'create' },
          tokenRequestHandler({ issuer: options.issuer, audiences, key, maxExpirationSeconds: options.maxExpirationSeconds, get }),
        );
        if (options.discovery) {
          for (const route of discoveryRoutes(options.issuer, options.jwksUri ?? defaultJwksUri(options.issuer), [key])) extensions.route(route);
        }
        authenticator = new ServiceAccountTokenAuthenticator({ issuer: options.issuer, audiences, keys: [key], get });
      },
      stop() {
        authenticator = undefined;
      },
    });

    kernel.hooks.authenticate.tapPromise({ name: PLUGIN_NAME, stage: CHAIN_STAGE.TOKEN }, (request) =>
      authenticateBearerToken(request, (token) => authenticator?.authenticate(token)),
    );
  },
});
export default plugin;

export type ServiceAccountTokenOptions = PluginOptions<typeof plugin>;

export { PLUGIN_NAME } from './names.js';
