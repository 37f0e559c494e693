import { definePlugin } from '@skiff/kernel';

/** ClusterIP and NodePort allocation for Services (IPAddress and ServiceCIDR objects), the kubernetes Service. */
const plugin = definePlugin({
  name: '@skiff/plugin-service-allocator',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply() {},
});
export default plugin;
