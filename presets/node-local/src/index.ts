import { definePreset } from '@skiff/kernel';

/**
 * A real node, without a control plane: the kubelet with containerd (started by Skiff under the data dir), pods on a
 * CNI bridge, Service traffic through the nftables service proxy, the built-in volume types; it reports this
 * machine's address as its InternalIP. `skiff join --preset local` runs it against a control plane on another
 * machine; the local preset runs it in-process beside its control plane. Needs root and the system packages of
 * scripts/install-system-deps.sh.
 */
export default definePreset({
  name: '@skiff/preset-node-local',
  plugins: [
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
    '@skiff/plugin-cri-containerd',
    '@skiff/plugin-cni-bridge',
    '@skiff/plugin-proxy-nftables',
    '@skiff/plugin-volumes-builtin',
  ],
});
