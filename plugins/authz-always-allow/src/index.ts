import { definePlugin } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-authz-always-allow';

/**
 * Allows every authenticated request (kube-apiserver's --authorization-mode=AlwaysAllow).
 * For development clusters only: anyone who authenticates can do anything.
 */
export default definePlugin({
  name: PLUGIN_NAME,
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.authorize.tap({ name: PLUGIN_NAME, stage: 1000 }, () => ({ decision: 'allow', reason: 'always-allow authorizer' }));
  },
});
