import { definePreset } from '@skiff/kernel';

/**
 * The local preset: a real one-machine cluster. The dev preset's control plane, with kubelets that run real
 * containers through containerd (started by Skiff, one per node, under the data dir) and attach pods to a
 * CNI bridge. Needs root, containerd, runc and the CNI plugins (scripts/install-system-deps.sh).
 */
export default definePreset({
  name: '@skiff/preset-local',
  extends: ['@skiff/preset-dev'],
  plugins: [
    ['@skiff/plugin-cri-simulated', false],
    ['@skiff/plugin-network-ipam', false],
    '@skiff/plugin-cri-containerd',
    '@skiff/plugin-cni-bridge',
    ['@skiff/kubelet', { runtime: 'containerd', network: 'bridge', podsOnShutdown: 'stop', capacity: { source: 'host' } }],
  ],
  config: {
    nodes: 1,
  },
});
