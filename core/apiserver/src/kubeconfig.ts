import { chmodSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { stringify } from 'yaml';

export interface KubeconfigOptions {
  /** https://host:port */
  server: string;
  caPem: string;
  /** Bearer token of the user; without it the user entry carries no credential. */
  token?: string;
  clusterName?: string;
  userName?: string;
  contextName?: string;
  namespace?: string;
}

/** Writes a kubeconfig for one cluster, user and context (mode 0600: it may hold a token). */
export function writeKubeconfig(file: string, options: KubeconfigOptions): void {
  const cluster = options.clusterName ?? 'skiff';
  const user = options.userName ?? 'admin';
  const context = options.contextName ?? 'skiff';
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: options.server, 'certificate-authority-data': Buffer.from(options.caPem).toString('base64') } }],
    users: [{ name: user, user: options.token ? { token: options.token } : {} }],
    contexts: [{ name: context, context: { cluster, user, namespace: options.namespace ?? 'default' } }],
    'current-context': context,
    preferences: {},
  };
  writeFileSync(file, stringify(config), { mode: 0o600 });
  chmodSync(file, 0o600);
}

/** The URL clients use: a wildcard listen address is reached through loopback; IPv6 goes in brackets. */
export function serverUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `https://${isIP(reachable) === 6 ? `[${reachable}]` : reachable}:${port}`;
}
