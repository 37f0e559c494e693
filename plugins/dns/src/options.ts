import { BlockList, isIP } from 'node:net';
import { KernelError, type OptionsOf, type OptionsSchema } from '@skiff/kernel';
import { PLUGIN_NAME } from './names.js';

export const optionsSchema = {
  type: 'object',
  properties: {
    clusterDomain: {
      type: 'string',
      default: 'cluster.local',
      pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$',
      description: "the cluster's DNS domain (the kubelets' clusterDomain)",
    },
    serviceIP: {
      type: 'string',
      default: '10.96.0.10',
      description: "the ClusterIP of the kube-dns Service (the kubelets' clusterDNS): the tenth address of the default service range",
    },
    address: {
      type: 'string',
      default: '127.0.0.1',
      description: "the address the server listens on: an IP, or 'host' for this machine's address pods can reach (the config's advertiseAddress)",
    },
    port: { type: 'integer', minimum: 0, maximum: 65535, default: 0, description: 'the UDP and TCP port; 0 picks a free one, the same for both' },
    upstream: {
      type: 'array',
      items: { type: 'string' },
      description: "resolvers for names outside the cluster: 'IP' or 'IP:port' ('[IPv6]:port'); default: the nameservers of resolvConf",
    },
    resolvConf: { type: 'string', default: '/etc/resolv.conf', description: 'where the upstream resolvers are read from when `upstream` is not given' },
    ttl: { type: 'integer', minimum: 0, maximum: 3600, default: 5, description: 'the TTL of cluster records, in seconds' },
    cacheSize: { type: 'integer', minimum: 0, default: 10_000, description: 'answers kept per cache (forwarded answers, encoded cluster answers)' },
    maxCacheSeconds: { type: 'integer', minimum: 0, default: 30, description: 'the longest a forwarded answer (positive or negative) is cached' },
    clients: {
      type: 'array',
      items: { type: 'string' },
      default: ['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '::1/128', 'fc00::/7', 'fe80::/10'],
      description:
        'the client addresses (CIDRs) the server answers; the listen address is always one. Others are ignored, so a server on a public address is no open resolver',
    },
    upstreamTimeoutMs: {
      type: 'integer',
      minimum: 10,
      default: 2000,
      description: 'how long a forwarded query may take over all upstream attempts before the client gets SERVFAIL',
    },
  },
} as const satisfies OptionsSchema;

/** The plugin's options, as `apply` receives them (defaults filled in). */
export type DnsOptions = OptionsOf<typeof optionsSchema>;

/** An upstream resolver. */
export interface Upstream {
  address: string;
  port: number;
  family: 4 | 6;
}

function optionError(option: string, detail: string): KernelError {
  return new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail: `option "${option}": ${detail}` });
}

/** `IP`, `IP:port` or `[IPv6]:port`; undefined when it is none of them. */
export function parseUpstream(text: string, defaultPort = 53): Upstream | undefined {
  let address = text.trim();
  let port = defaultPort;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(address);
  if (bracketed) {
    address = bracketed[1]!;
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (isIP(address) === 0) {
    const colon = address.lastIndexOf(':');
    if (colon < 0 || !/^\d+$/.test(address.slice(colon + 1))) return undefined;
    port = Number(address.slice(colon + 1));
    address = address.slice(0, colon);
  }
  const family = isIP(address);
  if (family === 0 || address.includes('%') || !Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { address, port, family: family as 4 | 6 };
}

/** The checks the schema cannot make; each failure names its option. */
/** The `clients` option as a BlockList (its `check` answers "may ask"); throws naming the entry that is no CIDR. */
export function clientList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  cidrs.forEach((cidr, index) => {
    const [address = '', prefix] = cidr.split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? (family === 6 ? 128 : 32) : Number(prefix);
    if (family === 0 || !Number.isInteger(bits) || bits < 0 || bits > (family === 6 ? 128 : 32))
      throw optionError(`clients[${index}]`, `want an address or a CIDR such as 10.0.0.0/8 (got "${cidr}")`);
    list.addSubnet(address, bits, family === 6 ? 'ipv6' : 'ipv4');
  });
  return list;
}

export function checkDnsOptions(options: DnsOptions): { upstream: Upstream[] | undefined; clients: BlockList } {
  if (isIP(options.serviceIP) === 0) throw optionError('serviceIP', `want an IP address (got "${options.serviceIP}")`);
  if (options.address !== 'host' && isIP(options.address) === 0) throw optionError('address', `want an IP address or 'host' (got "${options.address}")`);
  if (options.clusterDomain.length > 200) throw optionError('clusterDomain', 'longer than 200 characters');
  let upstream: Upstream[] | undefined;
  if (options.upstream) {
    upstream = options.upstream.map((text, index) => {
      const parsed = parseUpstream(text);
      if (!parsed) throw optionError(`upstream[${index}]`, `want 'IP', 'IP:port' or '[IPv6]:port' (got "${text}")`);
      return parsed;
    });
  }
  return { upstream, clients: clientList(options.clients) };
}

/** The nameserver lines of a resolv.conf (resolv.conf(5)); port 53 each. */
export function nameserversOf(resolvConf: string): Upstream[] {
  const servers: Upstream[] = [];
  for (const line of resolvConf.split('\n')) {
    const match = /^\s*nameserver\s+(\S+)/.exec(line);
    const parsed = match ? parseUpstream(match[1]!) : undefined;
    if (parsed) servers.push(parsed);
  }
  return servers;
}
