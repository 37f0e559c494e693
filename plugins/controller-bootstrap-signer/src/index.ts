import type { UserInfo } from '@skiff/api';
import { createLoopbackClient } from '@skiff/client';
import { controllerPlugin } from '@skiff/controller-manager';
import { AUTHORIZE_STAGE, LIFECYCLE_STAGE, packageInfo, type AuthzAttributes, type PluginOptions } from '@skiff/kernel';
import { TokenCleaner } from './cleaner.js';
import { clusterInfoKubeconfig, defaultServer } from './kubeconfig.js';
import { CLEANER_CONTROLLER_NAME, CLUSTER_INFO_NAME, CLUSTER_INFO_NAMESPACE, DEFAULT_TOKEN_GROUPS, PLUGIN_NAME, SIGNER_CONTROLLER_NAME } from './names.js';
import { ensureJoinRbac } from './rbac.js';
import { BootstrapSigner } from './signer.js';

/** Who creates the RBAC objects for joining nodes: a cluster admin, as kubeadm's admin.conf is. */
const RBAC_WRITER: UserInfo = { username: 'system:skiff:bootstrap-signer-setup', groups: ['system:masters', 'system:authenticated'] };

/** A GET of kube-public/cluster-info, the one read a joining machine makes anonymously. */
function isClusterInfoRead(attributes: AuthzAttributes): boolean {
  return (
    attributes.isResourceRequest &&
    attributes.verb === 'get' &&
    attributes.apiGroup === '' &&
    attributes.resource === 'configmaps' &&
    attributes.subresource === '' &&
    attributes.namespace === CLUSTER_INFO_NAMESPACE &&
    attributes.name === CLUSTER_INFO_NAME
  );
}

/**
 * kubeadm's bootstrap tokens on the control-plane side: the `bootstrapsigner` controller publishes and signs the
 * cluster-info ConfigMap, the `tokencleaner` controller deletes expired tokens, and at start the RBAC objects that
 * let nodes join with a token are created when missing.
 */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['apiServerInfo', 'apiHandler', 'resourceRegistry'],
  workers: 'Bootstrap token Secrets the token cleaner works on at once (the signer keeps its one ConfigMap with one worker)',
  options: {
    server: {
      type: 'string',
      pattern: '^https://\\S+$',
      description:
        "The API server address cluster-info publishes, e.g. https://10.0.0.1:6443 (default: the API server's URL; when it listens on every interface, this machine's advertised address)",
    },
    rbac: { type: 'boolean', default: true, description: 'Create, when missing, the RBAC objects kubeadm sets up for joining nodes' },
    joinGroup: {
      type: 'string',
      pattern: '^system:bootstrappers(:[a-z0-9:-]{0,255}[a-z0-9])?$',
      default: DEFAULT_TOKEN_GROUPS[0],
      description: 'The group whose tokens may ask for node client certificates, approved automatically (kubeadm: its default node token group)',
    },
  },
  controllers: (options, kernel) => ({
    [SIGNER_CONTROLLER_NAME]: (ctx) => {
      const info = kernel.resolve('apiServerInfo');
      return new BootstrapSigner(ctx, clusterInfoKubeconfig(options.server ?? defaultServer(info, kernel.config.advertiseAddress), info.caPem));
    },
    [CLEANER_CONTROLLER_NAME]: (ctx) => new TokenCleaner(ctx),
  }),
  apply(kernel, options) {
    // Joining machines read cluster-info before they have any credentials. Under RBAC the Role below grants it; a
    // cluster without RBAC (the dev preset: everyone authenticated may do anything, anonymous users nothing) gets the
    // same one permission here, so discovery works with every authorizer set.
    kernel.hooks.authorize.tap({ name: PLUGIN_NAME, stage: AUTHORIZE_STAGE.PUBLIC_INFO }, (attributes) =>
      isClusterInfoRead(attributes) ? { decision: 'allow', reason: 'cluster-info is public (kubeadm:bootstrap-signer-clusterinfo)' } : undefined,
    );
    if (!options.rbac) return;
    // After the API server has started and authz-rbac has written the default roles these bindings refer to.
    kernel.lifecycle(`${PLUGIN_NAME}/rbac`, LIFECYCLE_STAGE.API_SERVER + 20, {
      async start() {
        if (!kernel.resolve('resourceRegistry').get('rbac.authorization.k8s.io', 'clusterrolebindings')) return;
        const created = await ensureJoinRbac(createLoopbackClient(kernel.resolve('apiHandler'), RBAC_WRITER), options.joinGroup);
        if (created.length > 0) kernel.logger.info({ created }, 'RBAC objects for joining nodes created');
      },
    });
  },
});
export default plugin;

export type BootstrapSignerOptions = PluginOptions<typeof plugin>;

export { signClusterInfo, verifyClusterInfoSignature } from './jws.js';
export { createBootstrapToken, type BootstrapTokenOptions, type CreatedBootstrapToken } from './create-token.js';
export { clusterInfoKubeconfig } from './kubeconfig.js';
export { joinRbacObjects } from './rbac.js';
export { BootstrapSignerError, BOOTSTRAP_SIGNER_ERRORS, type BootstrapSignerErrorCode } from './errors.js';
export {
  CLEANER_CONTROLLER_NAME,
  CLUSTER_INFO_NAME,
  CLUSTER_INFO_NAMESPACE,
  KUBECONFIG_KEY,
  PLUGIN_NAME,
  SIGNATURE_KEY_PREFIX,
  SIGNER_CONTROLLER_NAME,
  TOKEN_USAGES,
  type TokenUsage,
} from './names.js';
