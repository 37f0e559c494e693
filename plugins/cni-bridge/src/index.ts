import { definePlugin, KernelError, packageInfo, type NetworkFactory, type OptionsOf, type OptionsSchema } from '@skiff/kernel';
import { parseCidr } from './cidr.js';
import { NETWORK_NAME, PLUGIN_NAME } from './names.js';
import { BridgeNetwork } from './network.js';

const stringList = { type: 'array', items: { type: 'string' } } as const;

const optionsSchema = {
  type: 'object',
  properties: {
    clusterCIDR: {
      type: 'string',
      default: '10.244.0.0/16',
      description: 'the pod address range of the cluster; node i gets the (i + 1)-th /nodeCIDRMaskSize block of it',
    },
    nodeCIDRMaskSize: { type: 'integer', minimum: 8, maximum: 30, default: 24, description: 'the prefix length of each node subnet' },
    binDir: { type: 'string', default: '/usr/lib/cni', description: 'where the CNI plugin binaries are (CNI_PATH)' },
    bridgeName: {
      type: 'string',
      pattern: '^[A-Za-z][A-Za-z0-9_-]*$',
      default: 'skiff',
      description: 'prefix of the bridge device: node i uses <bridgeName><i> (15 characters at most)',
    },
    mtu: { type: 'integer', minimum: 576, maximum: 65535, description: 'MTU of the bridge and the pod interfaces (default: the kernel default)' },
    hairpinMode: { type: 'boolean', default: true, description: 'a pod may reach itself through a Service address' },
    ipMasq: { type: 'boolean', default: true, description: 'traffic from pods to outside the pod subnet is masqueraded' },
    dns: {
      type: 'object',
      properties: { nameservers: stringList, searches: stringList, options: stringList },
      description: 'DNS settings reported in every CNI result',
    },
  },
} as const satisfies OptionsSchema;

export type CniBridgeOptions = OptionsOf<typeof optionsSchema>;

/** The factory kubelets pick with `network: 'bridge'`. */
function bridgeNetworkFactory(options: CniBridgeOptions): NetworkFactory {
  return { name: NETWORK_NAME, create: (node) => BridgeNetwork.create(node, options) };
}

/** The CIDR's shape only the schema can check; its meaning is checked here, at load. */
function checkCidrOptions(options: CniBridgeOptions): void {
  try {
    const cluster = parseCidr(options.clusterCIDR, 'clusterCIDR');
    if (options.nodeCIDRMaskSize < cluster.prefix)
      throw new Error(`option "nodeCIDRMaskSize" must be >= the prefix of clusterCIDR (${cluster.prefix}) (got ${options.nodeCIDRMaskSize})`);
  } catch (err) {
    throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail: (err as Error).message });
  }
}

/** Registers the `bridge` pod network: the standard CNI plugins (bridge, host-local, portmap, loopback) per node. */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    checkCidrOptions(options);
    kernel.hooks.networks.tap(PLUGIN_NAME, (registry) => registry.register(bridgeNetworkFactory(options)));
  },
});

export { PLUGIN_NAME, NETWORK_NAME } from './names.js';
