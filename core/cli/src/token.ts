import { parseArgs } from 'node:util';
import type { ConfigMap } from '@skiff/api';
import { parse as parseYaml } from 'yaml';
import { adminKubeconfigIn, clusterDataDir } from './cluster-dir.js';
import { caCertHash } from './join.js';
import type { Output } from './up.js';

const DURATION = /^(\d+)(s|m|h)$/;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** `24h`, `90m`, `3600s`, or `0` for a token that never expires. */
export function parseTtl(text: string): number {
  if (text === '0') return 0;
  const match = DURATION.exec(text);
  if (!match) throw new Error(`--ttl must be a duration such as 24h, 90m or 3600s, or 0 for never (got "${text}")`);
  return Number(match[1]) * UNIT_SECONDS[match[2]!]!;
}

/**
 * `skiff token create`: makes a bootstrap token (a Secret in kube-system, as kubeadm stores them) with the admin
 * kubeconfig of a running cluster, and prints the `skiff join` command another machine runs with it: the server
 * the cluster-info ConfigMap names, the token, and the pin of the cluster CA.
 */
export async function token(argv: string[], output: Output, cwd: string): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      config: { type: 'string', short: 'c' },
      ttl: { type: 'string', default: '24h' },
      description: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  const [verb, extra] = positionals;
  if (verb !== 'create') throw new Error(verb === undefined ? 'skiff token needs a subcommand: create' : `unknown token subcommand "${verb}" (known: create)`);
  if (extra !== undefined) throw new Error(`unexpected argument "${extra}"`);
  const ttlSeconds = parseTtl(values.ttl);
  const adminKubeconfig = adminKubeconfigIn(await clusterDataDir(cwd, { dataDir: values['data-dir'], configFile: values.config }));

  const { createClientFromKubeconfig, readKubeconfig } = await import('@skiff/client');
  const { createBootstrapToken } = await import('@skiff/plugin-controller-bootstrap-signer');
  const { RESOURCES } = await import('@skiff/api');
  const admin = readKubeconfig(adminKubeconfig);
  if (!admin.caPem) throw new Error(`${adminKubeconfig} holds no CA certificate to pin`);
  const client = createClientFromKubeconfig(adminKubeconfig);
  const created = await createBootstrapToken(client, {
    ttlSeconds,
    description: values.description ?? 'made by skiff token create',
    usages: ['authentication', 'signing'],
  });
  // The address joining machines use is the one the cluster publishes; the admin kubeconfig's may be loopback.
  let server = admin.server;
  try {
    const clusterInfo = await client.get<ConfigMap>(RESOURCES.configmaps, 'cluster-info', 'kube-public');
    const published = (parseYaml(clusterInfo.data?.['kubeconfig'] ?? '') as { clusters?: Array<{ cluster?: { server?: string } }> } | null)?.clusters?.[0]
      ?.cluster?.server;
    if (published) server = published;
  } catch {
    output.err('skiff: the cluster publishes no cluster-info ConfigMap (is @skiff/plugin-controller-bootstrap-signer loaded?); joining needs it');
  }
  output.out(`skiff join ${server} --token ${created.token} --ca-cert-hash sha256:${caCertHash(admin.caPem)}`);
}
