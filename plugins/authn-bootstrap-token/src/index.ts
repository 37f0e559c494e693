import { RESOURCES, type Secret } from '@skiff/api';
import type { ApiExtensions } from '@skiff/apiserver';
import { authenticateBearerToken, CHAIN_STAGE, definePlugin, LIFECYCLE_STAGE, packageInfo, type PluginOptions } from '@skiff/kernel';
import { BootstrapTokenAuthenticator } from './authenticator.js';
import { PLUGIN_NAME } from './names.js';

/**
 * Bootstrap tokens (kube-apiserver's `--enable-bootstrap-token-auth`): a bearer token `<id>.<secret>` whose
 * Secret `bootstrap-token-<id>` in kube-system holds that secret, allows authentication and has not expired
 * authenticates as `system:bootstrap:<id>` in `system:bootstrappers` and the token's extra groups. Nodes use
 * such a token to join: to read cluster-info, and to ask for their client certificate.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['apiExtensions'],
  options: { type: 'object', properties: {}, additionalProperties: false },
  apply(kernel) {
    let authenticator: BootstrapTokenAuthenticator | undefined;

    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.API_SERVER - 10, {
      start() {
        const extensions: ApiExtensions = kernel.resolve('apiExtensions');
        authenticator = new BootstrapTokenAuthenticator((namespace, name) => extensions.get<Secret>(RESOURCES.secrets, namespace, name));
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

export type BootstrapTokenAuthnOptions = PluginOptions<typeof plugin>;

export { BOOTSTRAP_TOKEN_PATTERN, EXTRA_GROUP_PATTERN, PLUGIN_NAME, TOKEN_DATA, TOKEN_NAMESPACE, TOKEN_SECRET_PREFIX, TOKEN_SECRET_TYPE } from './names.js';
export {
  expirationOf,
  hasExpired,
  isBootstrapTokenSecret,
  readBootstrapToken,
  splitBootstrapToken,
  tokenSecretData,
  type BootstrapToken,
} from './token-secret.js';
