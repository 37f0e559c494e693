import { AUTHORIZE_STAGE, definePlugin, packageInfo, type PluginOptions } from '@skiff/kernel';
import { DISCOVERY_PATHS, NON_RESOURCE_URL_PATTERN, PUBLIC_INFO_PATHS, pathMatcher } from './paths.js';

export const PLUGIN_NAME = '@skiff/plugin-authz-public-info';

/**
 * Kubernetes's system:public-info-viewer, bound to system:authenticated and system:unauthenticated: every
 * user, anonymous ones included, may GET the health checks and the version. Anything else gets no opinion
 * from this authorizer.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    properties: {
      paths: {
        type: 'array',
        items: { type: 'string', pattern: NON_RESOURCE_URL_PATTERN },
        default: [...PUBLIC_INFO_PATHS],
        description: 'Non-resource URLs anyone may GET, in RBAC\'s syntax: exact paths, or prefixes ending in "*"',
      },
      discovery: { type: 'boolean', default: false, description: 'Also allow /api, /apis and /openapi/v2, /openapi/v3 to everyone, anonymous users included' },
    },
  },
  apply(kernel, options) {
    const publicInfo = pathMatcher(options.paths);
    const discovery = options.discovery ? pathMatcher(DISCOVERY_PATHS) : () => false;
    kernel.hooks.authorize.tap({ name: PLUGIN_NAME, stage: AUTHORIZE_STAGE.PUBLIC_INFO }, (attributes) => {
      if (attributes.isResourceRequest || attributes.verb !== 'get') return undefined;
      if (publicInfo(attributes.path)) return { decision: 'allow', reason: 'public info (system:public-info-viewer)' };
      if (discovery(attributes.path)) return { decision: 'allow', reason: 'public discovery (system:discovery)' };
      return undefined;
    });
  },
});
export default plugin;

export type PublicInfoOptions = PluginOptions<typeof plugin>;

export { PUBLIC_INFO_PATHS } from './paths.js';
