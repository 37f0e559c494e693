import { CHAIN_STAGE, definePlugin, KernelError, LIFECYCLE_STAGE, packageInfo, type PluginOptions } from '@skiff/kernel';
import { OidcAuthenticator } from './authenticator.js';
import { checkAlgorithms, issuerConfigs, OptionProblem, type IssuerConfig, type JwtEntryOptions } from './config.js';
import { IssuerKeys } from './issuer.js';
import { DEFAULT_SIGNING_ALGORITHMS, PLUGIN_NAME } from './names.js';

/**
 * OpenID Connect bearer tokens (kube-apiserver's `jwt` authenticators of an AuthenticationConfiguration): JWTs
 * signed by a configured issuer, whose keys come from its discovery document, become users by the issuer's
 * claim mappings. Tokens of other issuers pass on to the next authenticator untouched.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    required: ['jwt'],
    properties: {
      jwt: {
        type: 'array',
        description: 'The issuers whose tokens are accepted, as the `jwt` list of an AuthenticationConfiguration',
        items: {
          type: 'object',
          required: ['issuer'],
          properties: {
            issuer: {
              type: 'object',
              required: ['url', 'audiences'],
              properties: {
                url: { type: 'string', description: "The issuer URL (https); a token is this issuer's when its `iss` is exactly this" },
                discoveryURL: { type: 'string', description: 'Where the discovery document is (default: <url>/.well-known/openid-configuration)' },
                audiences: { type: 'array', items: { type: 'string' }, description: "A token's `aud` must hold one of these" },
                certificateAuthority: { type: 'string', description: "PEM certificates trusted for the issuer's TLS (default: the system's roots)" },
                certificateAuthorityFile: { type: 'string', description: "The same, from a file (relative to the config file's folder)" },
              },
            },
            claimValidationRules: {
              type: 'array',
              description: 'Claims a token must carry with exactly this value',
              items: {
                type: 'object',
                required: ['claim', 'requiredValue'],
                properties: { claim: { type: 'string' }, requiredValue: { type: 'string' } },
              },
            },
            claimMappings: {
              type: 'object',
              properties: {
                username: {
                  type: 'object',
                  description: 'The username: its claim (default "sub") and a prefix (default "<url>#", none for the "email" claim; "" for none)',
                  properties: { claim: { type: 'string' }, prefix: { type: 'string' } },
                },
                groups: {
                  type: 'object',
                  description: 'The groups: a claim holding a string or a list of strings, and a prefix (default "")',
                  properties: { claim: { type: 'string' }, prefix: { type: 'string' } },
                },
                uid: { type: 'object', description: 'The uid: a claim holding a string', properties: { claim: { type: 'string' } } },
              },
            },
          },
        },
      },
      signingAlgorithms: {
        type: 'array',
        items: { type: 'string' },
        default: [...DEFAULT_SIGNING_ALGORITHMS],
        description: 'Signature algorithms accepted (asymmetric only)',
      },
      cacheTTLSeconds: {
        type: 'integer',
        minimum: 0,
        default: 10,
        description: 'How long an accepted token is taken without verifying it again; never past its exp (0: verify every time)',
      },
      cacheSize: { type: 'integer', minimum: 1, default: 4096, description: 'Most tokens the cache holds' },
    },
  },
  apply(kernel, options) {
    let issuers: IssuerConfig[];
    try {
      const algorithms = checkAlgorithms(options.signingAlgorithms);
      issuers = issuerConfigs(options.jwt as JwtEntryOptions[], algorithms, kernel.config.rootDir ?? process.cwd());
    } catch (err) {
      if (err instanceof OptionProblem) throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail: err.message });
      throw err;
    }
    const logger = kernel.logger.child({ component: PLUGIN_NAME });
    const keys = issuers.map((config) => new IssuerKeys(config, { logger }));
    const authenticator = new OidcAuthenticator(keys, { cacheTTLMs: options.cacheTTLSeconds * 1000, cacheSize: options.cacheSize });

    // Before the API server serves: a reachable issuer is discovered before the first request; an unreachable
    // one does not hold the start up (it is tried again in the background).
    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.API_SERVER - 10, {
      async start() {
        await Promise.all(keys.map((issuer) => issuer.start()));
      },
      stop() {
        for (const issuer of keys) issuer.stop();
      },
    });

    kernel.hooks.authenticate.tapPromise({ name: PLUGIN_NAME, stage: CHAIN_STAGE.TOKEN }, async (request) => {
      const header = request.headers.authorization;
      if (!header || !/^bearer /i.test(header)) return undefined;
      const result = await authenticator.authenticate(header.slice(7).trim());
      if (!result) return undefined;
      if ('error' in result) {
        request.errors.push(result.error);
        return undefined;
      }
      return result;
    });
  },
});
export default plugin;

export type OidcOptions = PluginOptions<typeof plugin>;

export { PLUGIN_NAME } from './names.js';
