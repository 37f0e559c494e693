import { definePlugin } from '@skiff/kernel';

/** ServiceAccount tokens: TokenRequest (serviceaccounts/token) and bearer-token authentication. */
const plugin = definePlugin({
  name: '@skiff/plugin-authn-serviceaccount',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply() {},
});
export default plugin;
