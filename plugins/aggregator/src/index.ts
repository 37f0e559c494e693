import { createLoopbackClient } from '@skiff/client';
import { definePlugin, LIFECYCLE_STAGE, packageInfo, type PluginOptions } from '@skiff/kernel';
import { Aggregator } from './aggregator.js';
import { frontProxyIdentity, publishRequestHeaderConfig } from './front-proxy.js';
import { AGGREGATOR_CLIENT_USER, PLUGIN_NAME } from './names.js';

/** Starts right after the API server listens: aggregated groups are served as soon as their APIServices are. */
const AGGREGATOR_STAGE = LIFECYCLE_STAGE.API_SERVER + 10;

/**
 * API aggregation (kube-aggregator's place): APIServices with a service are served by proxying their
 * group/version to that Service over HTTPS, with the user in the front-proxy headers, and get an Available condition.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['apiHandler', 'apiExtensions'],
  options: {
    type: 'object',
    properties: {
      recheckSeconds: {
        type: 'integer',
        minimum: 1,
        default: 30,
        description: 'How often each APIService with a service is checked again (besides whenever it, its Service or its Endpoints change)',
      },
      publishRequestHeaderConfig: {
        type: 'boolean',
        default: true,
        description: 'Write the front-proxy (requestheader) keys into kube-system/extension-apiserver-authentication, where aggregated API servers read them',
      },
    },
    additionalProperties: false,
  },
  apply(kernel, options) {
    let stop: AbortController | undefined;
    kernel.lifecycle(PLUGIN_NAME, AGGREGATOR_STAGE, {
      async start() {
        stop = new AbortController();
        const logger = kernel.logger.child({ component: 'aggregator' });
        const client = createLoopbackClient(kernel.resolve('apiHandler'), { ...{}, ...AGGREGATOR_CLIENT_USER, groups: [...AGGREGATOR_CLIENT_USER.groups] });
        const identity = frontProxyIdentity(kernel);
        if (options.publishRequestHeaderConfig) await publishRequestHeaderConfig(client, identity);
        const aggregator = new Aggregator({ client, extensions: kernel.resolve('apiExtensions'), identity, logger, recheckMs: options.recheckSeconds * 1000 });
        await aggregator.start(stop.signal);
      },
      stop() {
        stop?.abort();
      },
    });
  },
});
export default plugin;

export type AggregatorOptions = PluginOptions<typeof plugin>;

export { PLUGIN_NAME } from './names.js';
export { requestHeaderData, type FrontProxyIdentity } from './front-proxy.js';
