import { definePlugin, packageInfo } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-authz-webhook';

/** Authorizer that asks an HTTPS endpoint with SubjectAccessReviews. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply() {},
});
