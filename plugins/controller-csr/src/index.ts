import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { CsrApprover } from './approver.js';
import { loadSigningCa } from './ca.js';
import { CsrCleaner } from './cleaner.js';
import { APPROVING_CONTROLLER, CLEANER_CONTROLLER, DEFAULTS, MIN_EXPIRATION_SECONDS, PLUGIN_NAME, SIGNING_CONTROLLER } from './names.js';
import { CsrSigner } from './signer.js';

/** The certificates controllers: auto-approval of kubelet requests, signing with the cluster CA, cleanup of old requests. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  wants: ['apiServerInfo'],
  workers: 'Certificate signing requests each controller works on at once',
  options: {
    approveKubeletServing: {
      type: 'boolean',
      default: true,
      description: "Approve a node's kubelet-serving requests for names and addresses of its own Node object (upstream leaves them to an external approver)",
    },
    caFile: {
      type: 'string',
      description: "The CA certificate (PEM) to sign with; relative paths are taken from the data dir (default: the CA of this process's API server)",
    },
    caKeyFile: {
      type: 'string',
      description: "The CA's private key (PEM), likewise (default: the key of this process's API server's CA)",
    },
    durationSeconds: {
      type: 'integer',
      minimum: MIN_EXPIRATION_SECONDS,
      default: DEFAULTS.DURATION_SECONDS,
      description: 'The longest validity of an issued certificate; a request may ask for less with spec.expirationSeconds (--cluster-signing-duration)',
    },
    finishedRetentionSeconds: {
      type: 'number',
      minimum: 0,
      default: DEFAULTS.FINISHED_RETENTION_SECONDS,
      description: 'How long approved-and-issued, denied and failed requests are kept before the cleaner deletes them',
    },
    pendingRetentionSeconds: {
      type: 'number',
      minimum: 0,
      default: DEFAULTS.PENDING_RETENTION_SECONDS,
      description: 'How long requests nobody approved or denied are kept before the cleaner deletes them',
    },
  },
  controllers: (options, kernel) => ({
    [APPROVING_CONTROLLER]: (ctx) => new CsrApprover(ctx, { approveKubeletServing: options.approveKubeletServing }),
    [SIGNING_CONTROLLER]: (ctx) => new CsrSigner(ctx, loadSigningCa(kernel, options), { durationSeconds: options.durationSeconds }),
    [CLEANER_CONTROLLER]: (ctx) =>
      new CsrCleaner(ctx, { finishedRetentionMs: options.finishedRetentionSeconds * 1000, pendingRetentionMs: options.pendingRetentionSeconds * 1000 }),
  }),
});
export default plugin;

export type CsrControllersOptions = PluginOptions<typeof plugin>;

export { APPROVING_CONTROLLER, CLEANER_CONTROLLER, PLUGIN_NAME, SIGNER, SIGNING_CONTROLLER } from './names.js';
export { CSR_ERRORS, CsrError, type CsrErrorCode } from './errors.js';
