import { definePlugin } from '@skiff/kernel';

/** CustomResourceDefinitions served like built-in kinds: schema validation, defaulting, pruning, CEL, subresources. */
const plugin = definePlugin({
  name: '@skiff/plugin-apiextensions',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply() {},
});
export default plugin;
