import { definePlugin } from '@skiff/kernel';

/** Endpoints controller: the core v1 Endpoints of each Service from its pods. */
const plugin = definePlugin({
  name: '@skiff/plugin-controller-endpoints',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply() {},
});
export default plugin;
