import { definePlugin, packageInfo } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-authz-node';

/** Node authorizer: kubelets read only what their own pods use. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply() {},
});
