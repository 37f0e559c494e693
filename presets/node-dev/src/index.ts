import { definePreset } from '@skiff/kernel';

/**
 * A simulated node, without a control plane: the kubelet on the simulated runtime with the simple IPAM network and
 * the built-in volume types. `skiff join --preset dev` runs it against a control plane on another machine (or in
 * another process), which is how joining is tried without root.
 */
export default definePreset({
  name: '@skiff/preset-node-dev',
  plugins: ['@skiff/kubelet', '@skiff/plugin-cri-simulated', '@skiff/plugin-network-ipam', '@skiff/plugin-volumes-builtin'],
});
