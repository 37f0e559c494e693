export const PLUGIN_NAME = '@skiff/plugin-network-ipam';

/** The name nodes pick this network by (kubelet option `network`). */
export const NETWORK_NAME = 'ipam';

/** The CNI spec version results are reported in. */
export const CNI_VERSION = '1.0.0';
