import { definePlugin } from '@skiff/kernel';

/** StatefulSet controller: ordered, stable pod identities and PersistentVolumeClaims, rolling updates, status. */
const plugin = definePlugin({
  name: '@skiff/plugin-controller-statefulset',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply() {},
});
export default plugin;
