import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CONFIG_DEFAULTS } from '@skiff/kernel';
import { ClusterLookup } from './cluster-dir.js';
import type { Output } from './up.js';

/**
 * `skiff kubeconfig user --name N [--group G]…`: prints a kubeconfig for a new user, with a client certificate the
 * cluster CA signs (CN the name, O each group), as `kubeadm kubeconfig user` does. Nothing is stored in the
 * cluster: the certificate is the identity, and what the user may do is up to the authorizers (RBAC bindings).
 */
export async function kubeconfig(argv: string[], output: Output, cwd: string): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      name: { type: 'string' },
      group: { type: 'string', multiple: true },
      'data-dir': { type: 'string' },
      config: { type: 'string', short: 'c' },
      'expiration-seconds': { type: 'string' },
      server: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  const [verb, extra] = positionals;
  if (verb !== 'user')
    throw new Error(verb === undefined ? 'skiff kubeconfig needs a subcommand: user' : `unknown kubeconfig subcommand "${verb}" (known: user)`);
  if (extra !== undefined) throw new Error(`unexpected argument "${extra}"`);
  const name = values.name;
  if (!name) throw new Error("skiff kubeconfig user needs --name NAME (the user's name, the certificate's CN)");
  const groups = values.group ?? [];
  if (groups.some((group) => group === '')) throw new Error('--group must not be empty');
  const seconds = values['expiration-seconds'];
  if (seconds !== undefined && !/^[1-9]\d*$/.test(seconds)) throw new Error(`--expiration-seconds must be a positive whole number (got "${seconds}")`);

  // The cluster's data dir and address as `skiff up` finds them: the flags, else the config file's (from its own folder).
  const cluster = new ClusterLookup(cwd, { dataDir: values['data-dir'], configFile: values.config });
  const dataDir = await cluster.dataDir();

  // Loaded only now: the API server's package is large, and the other commands do not need it.
  const { readClusterCa, issueClientCertificate, serverUrl, ApiServerError } = await import('@skiff/apiserver');
  const { buildKubeconfig, readKubeconfig } = await import('@skiff/client');
  let ca;
  try {
    ca = readClusterCa(dataDir);
  } catch (err) {
    if (err instanceof ApiServerError && err.code === 'SKIFF_ERR_APISERVER_NO_CA')
      throw new Error(`no cluster CA in ${dataDir} (pki/ca.crt and pki/ca.key): start the cluster there once (skiff up), or name its data dir with --data-dir`);
    throw err;
  }
  const adminKubeconfig = join(dataDir, 'admin.kubeconfig');
  const server: string =
    values.server ??
    (existsSync(adminKubeconfig)
      ? readKubeconfig(adminKubeconfig).server
      : await cluster.config().then(({ config }) => serverUrl(config.host ?? CONFIG_DEFAULTS.host, config.port ?? CONFIG_DEFAULTS.port)));

  const issued = issueClientCertificate(ca, { user: name, groups, ...(seconds !== undefined ? { validitySeconds: Number(seconds) } : {}) });
  const text = buildKubeconfig({
    server,
    caPem: ca.caPem,
    certPem: issued.certPem,
    keyPem: issued.keyPem,
    clusterName: 'skiff',
    userName: name,
    contextName: `${name}@skiff`,
  });
  output.out(text.trimEnd());
}
