import { definePlugin, packageInfo } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-admission-node-restriction';

/** NodeRestriction admission: a node changes only itself and its own pods. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply() {},
});
