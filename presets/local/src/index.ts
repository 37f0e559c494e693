import { definePreset } from '@skiff/kernel';

/**
 * The local preset: a real one-machine cluster. The dev preset's control plane, with kubelets that run real
 * containers through containerd (started by Skiff, one per node, under the data dir), attach pods to a CNI
 * bridge, and carry Service traffic with the nftables service proxy; the cluster DNS server listens on this
 * machine's address and answers at the kube-dns Service. Nodes report this machine's address as their InternalIP.
 * Needs root, containerd, runc, the CNI plugins and nftables (scripts/install-system-deps.sh).
 */
export default definePreset({
  name: '@skiff/preset-local',
  extends: ['@skiff/preset-dev'],
  plugins: [
    ['@skiff/plugin-cri-simulated', false],
    ['@skiff/plugin-network-ipam', false],
    '@skiff/plugin-cri-containerd',
    '@skiff/plugin-cni-bridge',
    '@skiff/plugin-proxy-nftables',
    ['@skiff/plugin-dns', { address: 'host' }],
    [
      '@skiff/kubelet',
      {
        runtime: 'containerd',
        network: 'bridge',
        serviceProxy: 'nftables',
        nodeIP: 'host',
        clusterDNS: ['10.96.0.10'],
        podsOnShutdown: 'stop',
        capacity: { source: 'host' },
      },
    ],
  ],
  config: {
    nodes: 1,
  },
});
