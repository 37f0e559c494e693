import { isIP } from 'node:net';
import { stringify } from 'yaml';
import { hostAddress, type ApiServerInfo } from '@skiff/kernel';

/**
 * The kubeconfig cluster-info publishes, as kubeadm writes it: one unnamed cluster — its address and its CA,
 * embedded — and no users, contexts or credentials. Keys in kubeadm's (alphabetical) order.
 */
export function clusterInfoKubeconfig(server: string, caPem: string): string {
  return stringify({
    apiVersion: 'v1',
    clusters: [{ cluster: { 'certificate-authority-data': Buffer.from(caPem, 'utf8').toString('base64'), server }, name: '' }],
    contexts: [],
    'current-context': '',
    kind: 'Config',
    preferences: {},
    users: [],
  });
}

/**
 * The address joining nodes dial: the API server's own URL, unless it listens on every interface — then this
 * machine's advertised address (the config's `advertiseAddress`, else the default route's), which its serving
 * certificate names too.
 */
export function defaultServer(info: ApiServerInfo, advertiseAddress: string | undefined): string {
  if (info.host !== '0.0.0.0' && info.host !== '::' && info.host !== '') return info.url;
  const address = hostAddress(advertiseAddress);
  return `https://${isIP(address) === 6 ? `[${address}]` : address}:${info.port}`;
}
