import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { errorMessage } from '@skiff/api';
import { publishAuthenticationConfig } from '@skiff/apiserver';
import { createLoopbackClient } from '@skiff/client';
import { CHAIN_STAGE, definePlugin, KernelError, LIFECYCLE_STAGE, packageInfo, type PluginOptions } from '@skiff/kernel';
import { ADMIN_USER, ensureAdminCertificate } from './admin.js';
import { ClientCertificateVerifier } from './verify.js';

export const PLUGIN_NAME = '@skiff/plugin-authn-x509';
/** Who writes the client CA into the authentication ConfigMap: the API server itself. */
const PUBLISHER = { username: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] };

export { ClientCertificateVerifier, parseBundle, type Authentication, type Verdict, type VerifierOptions } from './verify.js';
export { ADMIN_GROUP, ADMIN_USER, ensureAdminCertificate, type AdminCertificate } from './admin.js';

/**
 * x509 client certificate authentication (kube-apiserver's --client-ca-file): a request whose TLS connection
 * presented a certificate chain that verifies against the CA bundle is the user named by the leaf's CN, in the
 * groups named by its O values. A chain that does not verify (another CA, expired, not for client
 * authentication) is refused with the reason, never taken for anonymous. Optionally the admin kubeconfig gets a
 * client certificate (CN kubernetes-admin, O system:masters) instead of a token.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  wants: ['apiServerInfo', 'apiHandler'],
  options: {
    type: 'object',
    properties: {
      clientCaFile: {
        type: 'string',
        minLength: 1,
        description: "PEM bundle of the CAs whose client certificates are accepted, relative to the config file's folder (default: the cluster CA)",
      },
      adminCertificate: {
        type: 'boolean',
        default: false,
        description: 'Write the admin kubeconfig with a client certificate (CN kubernetes-admin, O system:masters) instead of a token',
      },
    },
    additionalProperties: false,
  },
  apply(kernel, options) {
    const invalid = (detail: string) => new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail });
    let verifier: ClientCertificateVerifier | undefined;
    /** The cluster CA becomes known once the API server listens; clientCaFile is read before it does. */
    const currentVerifier = (): ClientCertificateVerifier | undefined => {
      if (!verifier && !options.clientCaFile && kernel.hasComponent('apiServerInfo'))
        verifier = new ClientCertificateVerifier(kernel.resolve('apiServerInfo').caPem);
      return verifier;
    };

    let clientCaPem: string | undefined;
    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.API_SERVER - 10, {
      start() {
        if (!options.clientCaFile) return;
        const file = resolve(kernel.config.rootDir ?? process.cwd(), options.clientCaFile);
        try {
          clientCaPem = readFileSync(file, 'utf8');
          verifier = new ClientCertificateVerifier(clientCaPem);
        } catch (err) {
          throw invalid(`clientCaFile ${file}: ${errorMessage(err)}`);
        }
      },
    });

    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.API_SERVER + 10, {
      async start() {
        // As kube-apiserver: the CAs of client certificates in kube-system/extension-apiserver-authentication
        // (client-ca-file), where aggregated API servers and the controller manager read them.
        const caPem = clientCaPem ?? (kernel.hasComponent('apiServerInfo') ? kernel.resolve('apiServerInfo').caPem : undefined);
        if (caPem && kernel.hasComponent('apiHandler'))
          await publishAuthenticationConfig(createLoopbackClient(kernel.resolve('apiHandler'), PUBLISHER), { 'client-ca-file': caPem });
        if (!kernel.hasComponent('apiServerInfo')) {
          if (options.clientCaFile && !options.adminCertificate) return;
          throw invalid('needs the cluster CA of @skiff/apiserver (load it, or set clientCaFile and leave adminCertificate off)');
        }
        if (!options.adminCertificate) return;
        const info = kernel.resolve('apiServerInfo');
        const admin = ensureAdminCertificate(dirname(info.caFile), { caPem: info.caPem, caKeyPem: readFileSync(info.caKeyFile, 'utf8') });
        const check = currentVerifier()!.authenticate([new X509Certificate(admin.certPem).raw]);
        if (!check || 'reason' in check)
          throw invalid(
            `adminCertificate: the admin certificate, signed by the cluster CA, is not accepted by clientCaFile's CAs (${check?.reason ?? 'no chain'})`,
          );
        kernel.provide('adminCredential', { username: ADMIN_USER, certPem: admin.certPem, keyPem: admin.keyPem }, { replace: true });
      },
    });

    kernel.hooks.authenticate.tap({ name: PLUGIN_NAME, stage: CHAIN_STAGE.CERTIFICATE }, (request) => {
      if (!request.peerCertificates?.length) return undefined;
      const current = currentVerifier();
      if (!current) {
        request.errors.push('x509: client certificates are not verified yet (the API server is starting)');
        return undefined;
      }
      const result = current.authenticate(request.peerCertificates);
      if (!result) return undefined;
      if ('reason' in result) {
        request.errors.push(result.reason);
        return undefined;
      }
      return { user: result.user };
    });
  },
});
export default plugin;

export type X509Options = PluginOptions<typeof plugin>;
