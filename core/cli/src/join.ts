import { createHash, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { request } from 'node:https';
import { hostname } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { createCluster, type Kernel } from '@skiff/kernel';
import { parse as parseYaml } from 'yaml';
import { ensurePrivateDataDir, SERVER_UMASK } from './data-dir.js';
import type { Output } from './up.js';

const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const CA_HASH = /^sha256:([0-9a-f]{64})$/;
const NODE_PRESETS = ['dev', 'local'];
/** How long the node waits for its client certificate (someone may have to approve it by hand). */
const CERTIFICATE_WAIT_MS = 5 * 60_000;
/** A kubeconfig whose certificate runs out sooner than this is bootstrapped again. */
const RENEW_MARGIN_MS = 60 * 60_000;

export interface JoinArgs {
  /** The API server the node bootstraps through (the first one named). */
  server: string;
  /** Every API server named (comma-separated): the kubelet fails over between them. */
  servers: string[];
  /** The bootstrap token and CA pin, for the first join. */
  bootstrap?: { tokenId: string; tokenSecret: string; caHash: string };
  preset: string;
  dataDir: string;
  nodeName: string;
  nodeIP?: string;
  logLevel?: string;
}

/** Parses `skiff join` flags; throws an Error whose message is the one line to show the user. */
export function parseJoinArgs(argv: string[], cwd: string): JoinArgs {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      token: { type: 'string' },
      'ca-cert-hash': { type: 'string' },
      preset: { type: 'string' },
      'data-dir': { type: 'string' },
      'node-name': { type: 'string' },
      'node-ip': { type: 'string' },
      'log-level': { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  const [serverList, extra] = positionals;
  if (!serverList) throw new Error('skiff join needs the API server: skiff join https://HOST:PORT --token ID.SECRET --ca-cert-hash sha256:HASH');
  if (extra !== undefined) throw new Error(`unexpected argument "${extra}"`);
  // Several API servers of one cluster, comma-separated: the node bootstraps through the first and fails over between all.
  const servers = serverList.split(',').map((server) => {
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw new Error(`the API server must be an https URL such as https://10.0.0.1:6443 (got "${server}")`);
    }
    if (url.protocol !== 'https:') throw new Error(`the API server must be an https URL such as https://10.0.0.1:6443 (got "${server}")`);
    return url.origin;
  });
  // Both are needed the first time only: later starts use the node's own credentials.
  const token = values.token === undefined ? undefined : TOKEN.exec(values.token);
  if (token === null) throw new Error('--token must be a bootstrap token ID.SECRET (6 and 16 characters a-z0-9), as `skiff token create` prints');
  const hash = values['ca-cert-hash'] === undefined ? undefined : CA_HASH.exec(values['ca-cert-hash']);
  if (hash === null) throw new Error('--ca-cert-hash must be sha256:<64 hex digits>, as `skiff token create` prints');
  const preset = values.preset ?? 'dev';
  if (!NODE_PRESETS.includes(preset)) throw new Error(`--preset must be one of ${NODE_PRESETS.join(', ')} (got "${preset}")`);
  const nodeIP = values['node-ip'];
  if (nodeIP !== undefined && !isIP(nodeIP)) throw new Error(`--node-ip must be an IP address (got "${nodeIP}")`);
  const nodeName = values['node-name'] ?? hostname().toLowerCase();
  if (!/^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/.test(nodeName))
    throw new Error(`--node-name must be a DNS subdomain: lower-case letters, digits, '-' and '.' (got "${nodeName}")`);
  return {
    server: servers[0]!,
    servers,
    ...(token && hash ? { bootstrap: { tokenId: token[1]!, tokenSecret: token[2]!, caHash: hash[1]! } } : {}),
    preset,
    dataDir: resolve(cwd, values['data-dir'] ?? '.skiff'),
    nodeName,
    nodeIP,
    logLevel: values['log-level'],
  };
}

/** sha256 of a certificate's SubjectPublicKeyInfo (DER), the pin kubeadm prints as --discovery-token-ca-cert-hash. */
export function caCertHash(caPem: string): string {
  const spki = new X509Certificate(caPem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('hex');
}

/**
 * `skiff join`: makes this machine a node of the cluster at `server`. The first time, it finds the cluster's CA
 * through the signed cluster-info ConfigMap (the token proves the signature, the hash pins the CA), asks for the
 * node's client certificate with the bootstrap token (TLS bootstrap) and writes `<data dir>/kubelet.kubeconfig`;
 * later starts reuse it. Then the node preset's kubelet runs with that kubeconfig until SIGINT/SIGTERM.
 */
export async function joinCluster(argv: string[], output: Output, cwd = process.cwd()): Promise<Kernel> {
  const started = performance.now();
  const args = parseJoinArgs(argv, cwd);
  process.umask(SERVER_UMASK);
  const previousMode = ensurePrivateDataDir(args.dataDir);
  if (previousMode !== undefined) output.err(`skiff: data dir ${args.dataDir} was mode 0${previousMode.toString(8)}; made it 0700 (owner only)`);
  const kubeconfigFile = join(args.dataDir, 'kubelet.kubeconfig');
  const { readKubeconfig } = await import('@skiff/client');
  const { certificateUsable } = await import('@skiff/kubelet');
  const current = existsSync(kubeconfigFile) ? readKubeconfig(kubeconfigFile) : undefined;
  if (current?.certPem && certificateUsable(current.certPem, RENEW_MARGIN_MS)) output.out(`skiff: using the node's credentials in ${kubeconfigFile}`);
  else if (args.bootstrap) await bootstrap(args.server, args.bootstrap, args.dataDir, args.nodeName, kubeconfigFile, output);
  else throw new Error(`${kubeconfigFile} holds no usable credentials: the first join needs --token and --ca-cert-hash (skiff token create prints them)`);

  output.out(`skiff: starting node ${args.nodeName} (preset node-${args.preset}, data dir ${relative(cwd, args.dataDir) || '.'})`);
  const kernel = await createCluster({
    cwd,
    config: {
      preset: `node-${args.preset}`,
      dataDir: args.dataDir,
      nodes: 1,
      ...(args.nodeIP ? { advertiseAddress: args.nodeIP } : {}),
      ...(args.logLevel ? { logLevel: args.logLevel } : {}),
      plugins: [
        [
          '@skiff/kubelet',
          { kubeconfig: kubeconfigFile, nodeName: args.nodeName, podCIDRSource: 'cluster', ...(args.servers.length > 1 ? { servers: args.servers } : {}) },
        ],
      ],
    },
  });
  await kernel.start();
  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  output.out(`ready: node ${args.nodeName} joined ${args.server} in ${seconds}s (Ctrl-C stops)`);
  return kernel;
}

/** TLS bootstrap: discovery of the CA through cluster-info, then the node's client certificate from a CSR. */
async function bootstrap(
  server: string,
  args: NonNullable<JoinArgs['bootstrap']>,
  dataDir: string,
  nodeName: string,
  kubeconfigFile: string,
  output: Output,
): Promise<void> {
  const { writeKubeconfig, createClientFromKubeconfig } = await import('@skiff/client');
  const { verifyClusterInfoSignature } = await import('@skiff/plugin-controller-bootstrap-signer');
  const { requestNodeClientCertificate } = await import('@skiff/kubelet');

  const clusterInfo = await fetchClusterInfo(server);
  const kubeconfigText = clusterInfo['kubeconfig'];
  if (!kubeconfigText) throw new Error(`the cluster-info ConfigMap at ${server} holds no kubeconfig`);
  const signature = clusterInfo[`jws-kubeconfig-${args.tokenId}`];
  if (!signature)
    throw new Error(
      `the cluster-info ConfigMap at ${server} has no signature for token ${args.tokenId}: the token is unknown or expired (skiff token create makes a new one)`,
    );
  if (!verifyClusterInfoSignature(kubeconfigText, signature, args.tokenId, args.tokenSecret))
    throw new Error(`the cluster-info signature for token ${args.tokenId} does not match the token's secret: check --token`);
  const discovered = clusterOf(kubeconfigText, server);
  const hash = caCertHash(discovered.caPem);
  if (hash !== args.caHash) throw new Error(`the cluster's CA has hash sha256:${hash}, not the sha256:${args.caHash} given with --ca-cert-hash`);
  output.out(`skiff: the cluster CA checks out (sha256:${hash.slice(0, 12)}…); server ${discovered.server}`);

  // The bootstrap credentials live in a kubeconfig of their own, as kubeadm's bootstrap-kubelet.conf.
  const bootstrapFile = join(dataDir, 'bootstrap-kubelet.kubeconfig');
  writeKubeconfig(bootstrapFile, {
    server: discovered.server,
    caPem: discovered.caPem,
    token: `${args.tokenId}.${args.tokenSecret}`,
    userName: 'kubelet-bootstrap',
  });
  const client = createClientFromKubeconfig(bootstrapFile);
  const { certPem, keyPem } = await requestNodeClientCertificate(client, nodeName, {
    timeoutMs: CERTIFICATE_WAIT_MS,
    waiting: (name) => output.out(`skiff: waiting for certificate signing request ${name} to be approved (kubectl certificate approve ${name})`),
  });
  writeKubeconfig(kubeconfigFile, { server: discovered.server, caPem: discovered.caPem, certPem, keyPem, userName: `system:node:${nodeName}` });
  output.out(`skiff: node client certificate issued; credentials in ${kubeconfigFile}`);
}

/** The one cluster of cluster-info's kubeconfig (it has no users or contexts): its server and CA. */
function clusterOf(kubeconfigText: string, server: string): { server: string; caPem: string } {
  const problem = (detail: string) => new Error(`the cluster-info kubeconfig at ${server} ${detail}`);
  let config: unknown;
  try {
    config = parseYaml(kubeconfigText);
  } catch {
    throw problem('is not YAML');
  }
  const clusters = (config as { clusters?: Array<{ cluster?: { server?: unknown; 'certificate-authority-data'?: unknown } }> } | null)?.clusters;
  const cluster = Array.isArray(clusters) ? clusters[0]?.cluster : undefined;
  if (typeof cluster?.server !== 'string') throw problem('names no server');
  if (typeof cluster['certificate-authority-data'] !== 'string') throw problem('holds no CA certificate');
  return { server: cluster.server, caPem: Buffer.from(cluster['certificate-authority-data'], 'base64').toString() };
}

/**
 * Reads kube-public/cluster-info without trusting the server yet (its CA is what is being discovered): anything
 * taken from it counts only once the token's signature and the CA hash have been checked.
 */
function fetchClusterInfo(server: string): Promise<Record<string, string>> {
  const url = new URL('/api/v1/namespaces/kube-public/configmaps/cluster-info', server);
  return new Promise((resolvePromise, reject) => {
    const req = request(url, { rejectUnauthorized: false, headers: { accept: 'application/json' }, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        if (res.statusCode !== 200) return reject(new Error(`reading cluster-info from ${server} answered ${res.statusCode}: ${body.slice(0, 200)}`));
        try {
          resolvePromise((JSON.parse(body) as { data?: Record<string, string> }).data ?? {});
        } catch {
          reject(new Error(`cluster-info from ${server} is not JSON`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${server} within 10s`)));
    req.on('error', (err) => reject(new Error(`cannot reach ${server}: ${err.message}`)));
    req.end();
  });
}
