import { definePreset } from '@skiff/kernel';

/**
 * The local preset: a real one-machine cluster. The dev preset's control plane, with kubelets of the node-local
 * preset — real containers through containerd (started by Skiff, one per node, under the data dir), pods on a CNI
 * bridge, Service traffic through the nftables service proxy; the cluster DNS server listens on this machine's
 * address and answers at the kube-dns Service. Nodes report this machine's address as their InternalIP.
 * Needs root, containerd, runc, the CNI plugins and nftables (scripts/install-system-deps.sh).
 */
export default definePreset({
  name: '@skiff/preset-local',
  extends: ['@skiff/preset-dev', '@skiff/preset-node-local'],
  plugins: [
    ['@skiff/plugin-cri-simulated', false],
    ['@skiff/plugin-network-ipam', false],
    ['@skiff/plugin-dns', { address: 'host' }],
  ],
  config: {
    nodes: 1,
  },
});
