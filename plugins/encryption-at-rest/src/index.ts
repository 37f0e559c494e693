import { isAbsolute, join, resolve } from 'node:path';
import { definePlugin, KernelError, packageInfo } from '@skiff/kernel';
import { EncryptionConfigError, encryptionRules, ensureGeneratedConfiguration, readEncryptionConfiguration, type EncryptionRule } from './config.js';
import { RuleSealer } from './sealer.js';

export const PLUGIN_NAME = '@skiff/plugin-encryption-at-rest';

/** The configuration written on first start when the options name none, in the data directory. */
export const GENERATED_CONFIG_FILE = 'encryption-config.yaml';

export { RuleSealer } from './sealer.js';
export { encryptionRules, type EncryptionRule, type ResourceEncryption, type ProviderConfig } from './config.js';

/**
 * Encryption at rest: Secrets (and whatever else the configuration names) are sealed with AES-GCM before the store
 * writes them, in its objects and its event log. Configured like kube-apiserver's `--encryption-provider-config`
 * (an EncryptionConfiguration); without one, a key is generated into `<dataDir>/encryption-config.yaml`. At every
 * start, values not sealed with the first provider's key (plain ones, or ones under a rotated-out key) are sealed
 * again in place.
 */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  provides: ['storageSealer'],
  options: {
    type: 'object',
    properties: {
      configFile: {
        type: 'string',
        description: `An EncryptionConfiguration file (YAML or JSON), relative to the project root (default: <dataDir>/${GENERATED_CONFIG_FILE}, generated on first start)`,
      },
      resources: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            resources: { type: 'array', items: { type: 'string' } },
            providers: { type: 'array', items: { type: 'object', additionalProperties: true } },
          },
        },
        description: "An EncryptionConfiguration's resources, inline instead of a file",
      },
    },
  },
  apply(kernel, options) {
    const fail = (detail: string) => new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail });
    if (options.configFile !== undefined && options.resources !== undefined) throw fail('give configFile or resources, not both');
    let inline: EncryptionRule[] | undefined;
    try {
      if (options.resources !== undefined) inline = encryptionRules(options.resources);
    } catch (err) {
      if (err instanceof EncryptionConfigError) throw fail(err.message);
      throw err;
    }
    kernel.hooks.components.tap(PLUGIN_NAME, () => {
      const { rootDir, dataDir } = kernel.config;
      let rules = inline;
      if (!rules) {
        const file = options.configFile
          ? isAbsolute(options.configFile)
            ? options.configFile
            : resolve(rootDir, options.configFile)
          : join(resolve(rootDir, dataDir), GENERATED_CONFIG_FILE);
        try {
          if (!options.configFile) ensureGeneratedConfiguration(file);
          rules = encryptionRules(readEncryptionConfiguration(file));
        } catch (err) {
          if (err instanceof EncryptionConfigError) throw fail(err.message.startsWith(file) ? err.message : `${file}: ${err.message}`);
          throw err;
        }
      }
      kernel.provide('storageSealer', new RuleSealer(rules));
    });
  },
});
