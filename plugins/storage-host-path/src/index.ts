import { definePlugin } from '@skiff/kernel';

/** Local volumes: a default StorageClass, PersistentVolumes provisioned as host directories, and claims bound to them. */
const plugin = definePlugin({
  name: '@skiff/plugin-storage-host-path',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply() {},
});
export default plugin;
