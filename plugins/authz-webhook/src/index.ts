import { AUTHORIZE_STAGE, definePlugin, KernelError, packageInfo, type PluginOptions } from '@skiff/kernel';
import { WebhookAuthorizer } from './authorizer.js';
import { WebhookClient } from './client.js';
import { OptionProblem, webhookConnection, type WebhookConnection } from './connection.js';
import { DEFAULTS, MAX_TIMEOUT_MS, PLUGIN_NAME } from './names.js';

/**
 * kube-apiserver's Webhook authorization mode: each request the cache cannot answer is sent to an HTTPS endpoint
 * as an authorization.k8s.io/v1 SubjectAccessReview. `status.allowed` allows it, `status.denied` denies it, and
 * neither leaves it to the next authorizer.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'The webhook (https); SubjectAccessReviews are POSTed to it' },
      caBundle: { type: 'string', description: "PEM certificates trusted for the webhook's TLS (default: the system's roots)" },
      caFile: { type: 'string', description: 'The same, from a file' },
      clientCertFile: { type: 'string', description: 'A client certificate (PEM) to present to the webhook' },
      clientKeyFile: { type: 'string', description: "The client certificate's key (PEM)" },
      kubeconfig: {
        type: 'string',
        description: "Instead of the above: a kubeconfig file naming the webhook (kube-apiserver's --authorization-webhook-config-file)",
      },
      timeoutMs: { type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_MS, default: DEFAULTS.timeoutMs, description: 'How long one review may take' },
      failurePolicy: {
        type: 'string',
        enum: ['NoOpinion', 'Deny'],
        default: 'NoOpinion',
        description: 'When the webhook fails: leave the request to the next authorizer, or deny it',
      },
      authorizedTTLSeconds: { type: 'integer', minimum: 0, default: DEFAULTS.authorizedTTLSeconds, description: 'How long an allow is cached (0: not cached)' },
      unauthorizedTTLSeconds: {
        type: 'integer',
        minimum: 0,
        default: DEFAULTS.unauthorizedTTLSeconds,
        description: 'How long a deny or no opinion is cached (0: not cached)',
      },
      cacheSize: { type: 'integer', minimum: 1, default: DEFAULTS.cacheSize, description: 'Most decisions the cache holds' },
      stage: { type: 'integer', default: AUTHORIZE_STAGE.DEFAULT, description: 'Where in the authorize chain the webhook is asked' },
    },
  },
  apply(kernel, options) {
    let connection: WebhookConnection;
    try {
      connection = webhookConnection(options, kernel.config.rootDir ?? process.cwd());
    } catch (err) {
      if (err instanceof OptionProblem) throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail: err.message });
      throw err;
    }
    const client = new WebhookClient(connection, options.timeoutMs);
    const authorizer = new WebhookAuthorizer((spec) => client.review(spec), {
      failurePolicy: options.failurePolicy,
      authorizedTTLMs: options.authorizedTTLSeconds * 1000,
      unauthorizedTTLMs: options.unauthorizedTTLSeconds * 1000,
      cacheSize: options.cacheSize,
      logger: kernel.logger.child({ component: PLUGIN_NAME }),
    });
    kernel.lifecycle(PLUGIN_NAME, 0, {
      stop() {
        client.close();
      },
    });
    kernel.hooks.authorize.tapPromise({ name: PLUGIN_NAME, stage: options.stage }, (attributes) => authorizer.authorize(attributes));
  },
});
export default plugin;

export type WebhookAuthorizerPluginOptions = PluginOptions<typeof plugin>;

export { PLUGIN_NAME } from './names.js';
