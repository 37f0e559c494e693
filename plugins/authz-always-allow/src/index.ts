import { AUTHORIZE_STAGE, definePlugin, packageInfo } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-authz-always-allow';

/** The group of requests that carried no credentials (authn-anonymous's system:anonymous). */
const UNAUTHENTICATED_GROUP = 'system:unauthenticated';

/**
 * Allows every authenticated request (kube-apiserver's --authorization-mode=AlwaysAllow).
 * For development clusters only: anyone who authenticates can do anything. Anonymous users get no
 * opinion: kube-apiserver refuses anonymous auth together with AlwaysAllow, because it would open the
 * whole cluster to anyone who can reach the port; here they see only what other authorizers allow
 * (authz-public-info: health checks and the version), and 403 elsewhere.
 */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply(kernel) {
    kernel.hooks.authorize.tap({ name: PLUGIN_NAME, stage: AUTHORIZE_STAGE.CATCH_ALL }, (attributes) =>
      attributes.user.groups.includes(UNAUTHENTICATED_GROUP) ? undefined : { decision: 'allow', reason: 'always-allow authorizer' },
    );
  },
});
