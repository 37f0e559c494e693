import { readFile } from 'node:fs/promises';
import type { Pod } from '@skiff/api';
import type { PodSandboxConfig } from '@skiff/kernel';

export type DnsConfig = NonNullable<PodSandboxConfig['dnsConfig']>;

/** A warning event the DNS choice calls for (reason, message). */
export type DnsWarning = [reason: string, message: string];

/** resolv.conf limits Kubernetes keeps pods within. */
export const MAX_NAMESERVERS = 3;
export const MAX_SEARCH_PATHS = 32;
export const MAX_SEARCH_CHARS = 2048;
/** What cluster DNS adds to a pod's resolver options. */
const CLUSTER_DNS_OPTIONS = ['ndots:5'];

export interface PodDnsOptions {
  /** The cluster DNS server addresses (kubelet option clusterDNS); none in a cluster without DNS. */
  clusterDNS: readonly string[];
  clusterDomain: string;
  /** The node's resolver configuration (kubelet option resolvConf); '' for none. */
  resolvConf: string;
}

const unique = (items: string[]) => [...new Set(items)];

/** nameserver, search and options lines of a resolv.conf (later search lines win, as in resolv.conf). */
export function parseResolvConf(text: string): Required<DnsConfig> {
  const config: Required<DnsConfig> = { servers: [], searches: [], options: [] };
  for (const raw of text.split('\n')) {
    const fields = raw
      .replace(/[#;].*$/, '')
      .trim()
      .split(/\s+/);
    const [keyword, ...values] = fields;
    if (keyword === 'nameserver' && values[0]) config.servers.push(values[0]);
    else if (keyword === 'search') config.searches = values.map((search) => (search === '.' ? search : search.replace(/\.$/, '')));
    else if (keyword === 'options') config.options.push(...values);
  }
  return config;
}

/** Resolver options merged by name (`ndots:2` replaces `ndots:5`), later ones winning. */
function mergeOptions(base: string[], extra: string[]): string[] {
  const byName = new Map<string, string>();
  for (const option of [...base, ...extra]) byName.set(option.split(':')[0]!, option);
  return [...byName.values()];
}

/**
 * A pod's resolver configuration (the sandbox's dnsConfig), the way the kubelet's DNS configurer makes it:
 *
 * - `ClusterFirst` (the default): the cluster DNS servers, search paths `<ns>.svc.<domain>`, `svc.<domain>`,
 *   `<domain>` before the node's, and `ndots:5`. A hostNetwork pod falls back to `Default`.
 * - `ClusterFirstWithHostNet`: the same, also for hostNetwork pods.
 * - `Default`: the node's resolv.conf.
 * - `None`: only what the pod's dnsConfig says.
 *
 * Then the pod's `dnsConfig` is appended (nameservers and searches without duplicates, options by name), and
 * the result kept within 3 nameservers and 32 search paths (2048 characters).
 *
 * Without cluster DNS (the kubelet's `clusterDNS` is empty, as in a cluster with no DNS add-on), `ClusterFirst`
 * pods get the node's resolv.conf — the `Default` policy — and a MissingClusterDNS warning, as Kubernetes does.
 */
export class PodDns {
  constructor(private readonly options: PodDnsOptions) {}

  async configFor(pod: Pod): Promise<{ config: DnsConfig; warnings: DnsWarning[] }> {
    const { clusterDNS, clusterDomain, resolvConf } = this.options;
    const warnings: DnsWarning[] = [];
    const host = resolvConf ? parseResolvConf(await readFile(resolvConf, 'utf8').catch(() => '')) : { servers: ['127.0.0.1'], searches: ['.'], options: [] };
    const policy = pod.spec.dnsPolicy || 'ClusterFirst';
    let kind: 'cluster' | 'host' | 'none' =
      policy === 'None' ? 'none' : policy === 'ClusterFirstWithHostNet' || (policy === 'ClusterFirst' && !pod.spec.hostNetwork) ? 'cluster' : 'host';
    if (kind === 'cluster' && !clusterDNS.length) {
      warnings.push([
        'MissingClusterDNS',
        'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.',
      ]);
      kind = 'host';
    }
    let config: Required<DnsConfig>;
    if (kind === 'none') config = { servers: [], searches: [], options: [] };
    else if (kind === 'host') config = host;
    else
      config = {
        servers: [...clusterDNS],
        searches: unique([`${pod.metadata.namespace}.svc.${clusterDomain}`, `svc.${clusterDomain}`, clusterDomain, ...host.searches]),
        options: [...CLUSTER_DNS_OPTIONS],
      };
    const own = pod.spec.dnsConfig;
    if (own) {
      config = {
        servers: unique([...config.servers, ...(own.nameservers ?? [])]),
        searches: unique([...config.searches, ...(own.searches ?? [])]),
        options: mergeOptions(
          config.options,
          (own.options ?? []).map((option) => (option.value !== undefined ? `${option.name}:${option.value}` : (option.name ?? ''))),
        ),
      };
    }
    return { config: this.withinLimits(config, warnings), warnings };
  }

  private withinLimits(config: Required<DnsConfig>, warnings: DnsWarning[]): DnsConfig {
    let { servers, searches } = config;
    if (servers.length > MAX_NAMESERVERS) {
      servers = servers.slice(0, MAX_NAMESERVERS);
      warnings.push([
        'DNSConfigForming',
        `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${servers.join(' ')}`,
      ]);
    }
    if (searches.length > MAX_SEARCH_PATHS || searches.join(' ').length > MAX_SEARCH_CHARS) {
      const kept: string[] = [];
      for (const search of searches) {
        if (kept.length === MAX_SEARCH_PATHS || [...kept, search].join(' ').length > MAX_SEARCH_CHARS) break;
        kept.push(search);
      }
      searches = kept;
      warnings.push([
        'DNSConfigForming',
        `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${searches.join(' ')}`,
      ]);
    }
    return { servers, searches, options: config.options };
  }
}
