import { AUTHORIZE_STAGE, definePlugin, packageInfo, type AuthzAttributes, type AuthzDecision, type PluginOptions } from '@skiff/kernel';

/** The npm package name: cluster configs name the plugin by it, and its hook tap carries it. */
export const PLUGIN_NAME = '{{package}}';

const READ_VERBS = new Set(['get', 'list', 'watch']);

/**
 * An authorizer: members of a group may only read. The authorize chain stops at the first `allow` or
 * `deny`; this tap denies writes by the group's members and has no opinion on anything else, so the
 * authorizers after it (RBAC, always-allow…) decide those. A deny names the reason the user reads in
 * the 403.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    properties: {
      group: { type: 'string', default: 'read-only', description: 'the group whose members may only get, list and watch' },
    },
  },
  apply(kernel, options) {
    kernel.hooks.authorize.tap({ name: PLUGIN_NAME, stage: AUTHORIZE_STAGE.DEFAULT }, (attributes) => decide(attributes, options));
  },
});

export default plugin;

/** The options `apply` receives, with defaults filled in. */
export type ReadOnlyGroupOptions = PluginOptions<typeof plugin>;

/** Deny a write by a member of the group; no opinion (undefined) otherwise. */
export function decide(attributes: AuthzAttributes, { group }: ReadOnlyGroupOptions): AuthzDecision {
  if (!attributes.user.groups.includes(group) || READ_VERBS.has(attributes.verb)) return undefined;
  return { decision: 'deny', reason: `members of group "${group}" may only read` };
}
