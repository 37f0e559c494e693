import { definePlugin } from '@skiff/kernel';

/** LoadBalancer Services get node addresses, as small local clusters do. */
const plugin = definePlugin({
  name: '@skiff/plugin-controller-service-lb',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply() {},
});
export default plugin;
