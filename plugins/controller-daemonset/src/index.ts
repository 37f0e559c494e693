import { definePlugin } from '@skiff/kernel';

/** DaemonSet controller: one pod per eligible node, rolling updates, status. */
const plugin = definePlugin({
  name: '@skiff/plugin-controller-daemonset',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply() {},
});
export default plugin;
