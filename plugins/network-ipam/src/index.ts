import { definePlugin, packageInfo, type NetworkFactory, type OptionsOf, type OptionsSchema } from '@skiff/kernel';
import { nodeSubnet, parseCidr } from './cidr.js';
import { NETWORK_NAME, PLUGIN_NAME } from './names.js';
import { IpamNetwork } from './network.js';

const optionsSchema = {
  type: 'object',
  properties: {
    clusterCIDR: {
      type: 'string',
      default: '10.244.0.0/16',
      description: 'the pod address range of the cluster; node i gets the (i + 1)-th /nodeCIDRMaskSize block of it',
    },
    nodeCIDRMaskSize: { type: 'integer', minimum: 8, maximum: 30, default: 24, description: 'the prefix length of each node subnet' },
  },
} as const satisfies OptionsSchema;

export type IpamOptions = OptionsOf<typeof optionsSchema>;

/** The factory kubelets pick with `network: 'ipam'`: one subnet and allocation folder per node. */
function ipamNetworkFactory(options: IpamOptions): NetworkFactory {
  return {
    name: NETWORK_NAME,
    create: (node) =>
      IpamNetwork.open(
        node.podCIDR ? parseCidr(node.podCIDR, 'podCIDR') : nodeSubnet(options.clusterCIDR, node.index, options.nodeCIDRMaskSize),
        node.dataDir,
        node.logger.child({ network: NETWORK_NAME }),
      ),
  };
}

/** Registers the host-local style pod network with the kubelet. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    kernel.hooks.networks.tap(PLUGIN_NAME, (registry) => registry.register(ipamNetworkFactory(options)));
  },
});

export { PLUGIN_NAME, NETWORK_NAME } from './names.js';
