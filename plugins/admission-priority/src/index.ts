import { definePlugin, packageInfo } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-admission-priority';

/** Priority admission: spec.priority from PriorityClasses, built-in system classes. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply() {},
});
