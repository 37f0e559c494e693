import { definePlugin } from '@skiff/kernel';

/** EndpointSlice controller: slices that follow the ready pods of each Service. */
const plugin = definePlugin({
  name: '@skiff/plugin-controller-endpointslice',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply() {},
});
export default plugin;
