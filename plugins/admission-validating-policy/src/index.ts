import { definePlugin, packageInfo } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-admission-validating-policy';

/** ValidatingAdmissionPolicy: CEL rules with bindings and params. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply() {},
});
