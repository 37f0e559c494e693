import { definePlugin } from '@skiff/kernel';

/** ServiceAccount controller: a default ServiceAccount in every namespace. */
const plugin = definePlugin({
  name: '@skiff/plugin-controller-serviceaccount',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply() {},
});
export default plugin;
