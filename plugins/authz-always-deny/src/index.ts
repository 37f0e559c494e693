import { AUTHORIZE_STAGE, definePlugin, packageInfo, type PluginOptions } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-authz-always-deny';

/** The reason every denial carries (kube-apiserver's AlwaysDeny gives the same). */
export const ALWAYS_DENY_REASON = 'Everything is forbidden.';

/**
 * Denies every request it is asked about (kube-apiserver's --authorization-mode=AlwaysDeny), for tests and for
 * clusters where nothing passes that was not allowed on purpose. At its default stage, the catch-all, it only
 * decides what no earlier authorizer did; at an earlier stage its deny beats every authorizer after it, the ones
 * that let the cluster's own components in included. The API server's system:masters check comes first whatever
 * the stage.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    properties: {
      stage: {
        type: 'integer',
        default: AUTHORIZE_STAGE.CATCH_ALL,
        description: 'Where in the authorize chain it denies (AUTHORIZE_STAGE: DEFAULT 0, PUBLIC_INFO 900, CATCH_ALL 1000)',
      },
    },
  },
  apply(kernel, options) {
    kernel.hooks.authorize.tap({ name: PLUGIN_NAME, stage: options.stage }, () => ({ decision: 'deny', reason: ALWAYS_DENY_REASON }));
  },
});
export default plugin;

export type AlwaysDenyOptions = PluginOptions<typeof plugin>;
