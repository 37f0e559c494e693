import { definePlugin } from '@skiff/kernel';

/** Publishes the cluster CA as the kube-root-ca.crt ConfigMap in every namespace. */
const plugin = definePlugin({
  name: '@skiff/plugin-controller-root-ca-publisher',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply() {},
});
export default plugin;
