import { parseIpv4Cidr } from '@skiff/api';
import { definePlugin, KernelError, packageInfo, type OptionsOf, type OptionsSchema, type ServiceProxyFactory } from '@skiff/kernel';
import { PLUGIN_NAME, PROXY_NAME } from './names.js';
import { acquireServiceProxy } from './shared.js';

const optionsSchema = {
  type: 'object',
  properties: {
    table: {
      type: 'string',
      pattern: '^[A-Za-z][A-Za-z0-9_-]{0,63}$',
      default: 'skiff-proxy',
      description: 'the nftables table (family ip) that holds every rule of the proxy',
    },
    clusterCIDR: { type: 'string', default: '10.244.0.0/16', description: 'the pod range: traffic to ClusterIPs from outside it is masqueraded' },
    serviceCIDRs: {
      type: 'array',
      items: { type: 'string' },
      description: 'the service ranges whose unheld addresses are refused (default: the ServiceCIDR objects of the cluster)',
    },
    masqueradeBit: { type: 'integer', minimum: 0, maximum: 31, default: 14, description: 'the packet mark bit that asks for masquerading (14: 0x4000)' },
    minSyncIntervalMs: {
      type: 'integer',
      minimum: 0,
      maximum: 10_000,
      default: 20,
      description: 'the shortest time between two syncs: changes closer together are applied in one transaction',
    },
    fullSyncSeconds: { type: 'number', minimum: 0, default: 60, description: 'how often the whole table is rewritten, repairing drift (0: never)' },
    netns: {
      type: 'string',
      description: "run nft, conntrack and the sysctls in this named network namespace instead of the host's (for tests and benchmarks)",
    },
  },
} as const satisfies OptionsSchema;

export type ProxyNftablesOptions = OptionsOf<typeof optionsSchema>;

/** Refuses CIDR options that are not IPv4 CIDRs, at load. */
function checkOptions(options: ProxyNftablesOptions): void {
  const cidrs: [string, string][] = [
    ['clusterCIDR', options.clusterCIDR],
    ...(options.serviceCIDRs ?? []).map((cidr, i): [string, string] => [`serviceCIDRs[${i}]`, cidr]),
  ];
  for (const [path, value] of cidrs) {
    const parsed = parseIpv4Cidr(value);
    if ('problem' in parsed)
      throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail: `option "${path}" is "${value}": ${parsed.problem}` });
  }
}

/** The factory kubelets pick with `serviceProxy: 'nftables'`. */
function nftablesProxyFactory(options: ProxyNftablesOptions): ServiceProxyFactory {
  return {
    name: PROXY_NAME,
    create: (context) =>
      acquireServiceProxy(
        {
          table: options.table,
          clusterCIDR: options.clusterCIDR,
          masqueradeMark: 2 ** options.masqueradeBit,
          ...(options.serviceCIDRs ? { serviceCIDRs: options.serviceCIDRs } : {}),
          minSyncIntervalMs: options.minSyncIntervalMs,
          fullSyncMs: options.fullSyncSeconds * 1000,
          ...(options.netns ? { netns: options.netns } : {}),
        },
        context,
      ),
  };
}

/** Registers the `nftables` service proxy: ClusterIPs, NodePorts, external and load-balancer IPs on nftables. */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: optionsSchema,
  apply(kernel, options) {
    checkOptions(options);
    kernel.hooks.serviceProxies.tap(PLUGIN_NAME, (registry) => registry.register(nftablesProxyFactory(options)));
  },
});
export default plugin;

export { PLUGIN_NAME, PROXY_NAME } from './names.js';
