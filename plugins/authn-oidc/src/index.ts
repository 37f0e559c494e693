import { authenticateBearerToken, CHAIN_STAGE, definePlugin, KernelError, LIFECYCLE_STAGE, packageInfo, type PluginOptions } from '@skiff/kernel';
import { OidcAuthenticator } from './authenticator.js';
import { resolve } from 'node:path';
import { checkAlgorithms, issuerConfigs, jwtEntriesFromFile, OptionProblem, type IssuerConfig, type JwtEntryOptions } from './config.js';
import { IssuerKeys } from './issuer.js';
import { DEFAULT_SIGNING_ALGORITHMS, PLUGIN_NAME } from './names.js';
import { JWT_ENTRIES_SCHEMA } from './schema.js';

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
    properties: {
      jwt: JWT_ENTRIES_SCHEMA,
      configFile: {
        type: 'string',
        description: "Instead of jwt: an AuthenticationConfiguration file (YAML or JSON, kube-apiserver's --authentication-config) whose jwt list is read",
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
    const rootDir = kernel.config.rootDir ?? process.cwd();
    try {
      const algorithms = checkAlgorithms(options.signingAlgorithms);
      if (options.jwt && options.configFile) throw new OptionProblem('configFile', 'cannot be combined with jwt');
      if (!options.jwt && !options.configFile) throw new OptionProblem('jwt', 'is required (or configFile)');
      const { entries, baseDir } = options.configFile
        ? jwtEntriesFromFile(resolve(rootDir, options.configFile))
        : { entries: options.jwt as JwtEntryOptions[], baseDir: rootDir };
      issuers = issuerConfigs(entries, algorithms, baseDir);
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

    kernel.hooks.authenticate.tapPromise({ name: PLUGIN_NAME, stage: CHAIN_STAGE.TOKEN }, (request) =>
      authenticateBearerToken(request, (token) => authenticator.authenticate(token)),
    );
  },
});
export default plugin;

export type OidcOptions = PluginOptions<typeof plugin>;

export { PLUGIN_NAME } from './names.js';
