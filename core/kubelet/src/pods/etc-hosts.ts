import { chmod, readFile, writeFile } from 'node:fs/promises';
import type { Pod } from '@skiff/api';

const MANAGED_HEADER = '# Kubernetes-managed hosts file.\n';
const MANAGED_HEADER_HOST_NETWORK = '# Kubernetes-managed hosts file (host network).\n';
const BOILERPLATE = [
  '127.0.0.1\tlocalhost',
  '::1\tlocalhost ip6-localhost ip6-loopback',
  'fe00::0\tip6-localnet',
  'fe00::0\tip6-mcastprefix',
  'fe00::1\tip6-allnodes',
  'fe00::2\tip6-allrouters',
];

/** Kubernetes truncates host names to 63 characters, without a trailing `-` or `.`. */
const MAX_HOSTNAME = 63;

/** The pod's host name: spec.hostname, else its name (63 characters at most). */
export function podHostname(pod: Pod): string {
  const hostname = pod.spec.hostname || pod.metadata.name!;
  return hostname.length <= MAX_HOSTNAME ? hostname : hostname.slice(0, MAX_HOSTNAME).replace(/[-.]+$/, '');
}

function hostAliasEntries(pod: Pod): string {
  const aliases = pod.spec.hostAliases ?? [];
  if (!aliases.length) return '';
  return `\n# Entries added by HostAliases.\n${aliases.map((alias) => `${alias.ip ?? ''}\t${(alias.hostnames ?? []).join('\t')}\n`).join('')}`;
}

/**
 * The pod's /etc/hosts, as the kubelet writes it: localhost boilerplate, the pod's addresses with its host
 * name (and FQDN when it has a subdomain), then its hostAliases. A hostNetwork pod gets the node's own hosts
 * file instead, plus its aliases.
 */
export function etcHostsContent(pod: Pod, podIPs: string[], clusterDomain: string, nodeHosts = ''): string {
  if (pod.spec.hostNetwork) return MANAGED_HEADER_HOST_NETWORK + nodeHosts + hostAliasEntries(pod);
  const hostname = podHostname(pod);
  const subdomain = pod.spec.subdomain;
  const names = subdomain ? `${hostname}.${subdomain}.${pod.metadata.namespace}.svc.${clusterDomain}\t${hostname}` : hostname;
  const lines = [...BOILERPLATE, ...podIPs.map((ip) => `${ip}\t${names}`)];
  return MANAGED_HEADER + lines.map((line) => `${line}\n`).join('') + hostAliasEntries(pod);
}

/** Writes the pod's hosts file when its content changed (mode 0644: every container user reads it). */
export async function writeEtcHosts(path: string, content: string): Promise<void> {
  const current = await readFile(path, 'utf8').catch(() => undefined);
  if (current === content) return;
  await writeFile(path, content, { mode: 0o644 });
  await chmod(path, 0o644); // a new file gets what the server's umask (0077) leaves of the mode
}

/** The node's hosts file, for hostNetwork pods (empty where there is none). */
export async function nodeHostsFile(path = '/etc/hosts'): Promise<string> {
  return readFile(path, 'utf8').catch(() => '');
}
