import { CHAIN_STAGE, definePlugin, packageInfo, type AuthnRequest } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-authn-anonymous';

/** The user and group Kubernetes gives a request that carries no credentials. */
const ANONYMOUS_USERNAME = 'system:anonymous';
const UNAUTHENTICATED_GROUP = 'system:unauthenticated';

/**
 * A request carries credentials when it has an Authorization header (of any scheme) or a client
 * certificate. Such a request is never anonymous: if no authenticator accepted its credentials, it is a 401.
 */
function carriesCredentials(request: AuthnRequest): boolean {
  return request.headers.authorization !== undefined || (request.peerCertificates?.length ?? 0) > 0;
}

/**
 * Anonymous authentication (kube-apiserver's --anonymous-auth): a request with no credentials at all becomes
 * user system:anonymous in group system:unauthenticated, and the authorizers decide what it may see. Tapped
 * last in the chain, so every real authenticator goes first; a request whose credentials were rejected
 * (an unknown token, a foreign certificate) stays a 401.
 */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: { type: 'object', properties: {}, additionalProperties: false },
  apply(kernel) {
    kernel.hooks.authenticate.tap({ name: PLUGIN_NAME, stage: CHAIN_STAGE.ANONYMOUS }, (request) => {
      if (carriesCredentials(request) || request.errors.length > 0) return undefined;
      return { user: { username: ANONYMOUS_USERNAME, groups: [UNAUTHENTICATED_GROUP] } };
    });
  },
});
