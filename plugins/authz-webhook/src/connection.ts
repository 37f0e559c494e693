import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse } from 'yaml';

/** How to reach the webhook: its URL, the CA its certificate must chain to, and how to prove who we are. */
export interface WebhookConnection {
  url: URL;
  /** PEM certificates trusted for the webhook's TLS; the system's roots when absent. */
  ca?: string;
  /** A client certificate and key (PEM) to present. */
  cert?: string;
  key?: string;
  /** A bearer token to send. */
  token?: string;
}

/** A wrong option: its path and what is wrong, made one line naming the plugin by the caller. */
export class OptionProblem extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`option "${path}" ${message}`);
  }
}

export interface ConnectionOptions {
  url?: string;
  caBundle?: string;
  caFile?: string;
  clientCertFile?: string;
  clientKeyFile?: string;
  kubeconfig?: string;
}

function readText(file: string, path: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new OptionProblem(path, `cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (${file})`);
  }
}

function certificates(pem: string, path: string): string {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!blocks) throw new OptionProblem(path, 'must hold PEM certificates (-----BEGIN CERTIFICATE-----)');
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (err) {
      throw new OptionProblem(path, `holds a certificate that cannot be read: ${(err as Error).message}`);
    }
  }
  return pem;
}

function privateKey(pem: string, path: string): string {
  try {
    createPrivateKey(pem);
  } catch (err) {
    throw new OptionProblem(path, `is not a PEM private key: ${(err as Error).message}`);
  }
  return pem;
}

function webhookUrl(value: string, path: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OptionProblem(path, `must be a URL (got ${JSON.stringify(value)})`);
  }
  if (url.protocol !== 'https:') throw new OptionProblem(path, `must be an https URL (got ${JSON.stringify(value)})`);
  if (url.username || url.password || url.hash) throw new OptionProblem(path, `must not carry a user, password or fragment (got ${JSON.stringify(value)})`);
  return url;
}

/**
 * The connection the options describe: either `url` with `caBundle` or `caFile` and an optional client certificate,
 * or a kubeconfig file (kube-apiserver's --authorization-webhook-config-file). Relative files are taken from `rootDir`.
 */
export function webhookConnection(options: ConnectionOptions, rootDir: string): WebhookConnection {
  if (options.kubeconfig) {
    const direct = (['url', 'caBundle', 'caFile', 'clientCertFile', 'clientKeyFile'] as const).filter((name) => options[name] !== undefined);
    if (direct.length) throw new OptionProblem('kubeconfig', `cannot be combined with ${direct.join(', ')} (the kubeconfig says how to connect)`);
    return kubeconfigConnection(resolve(rootDir, options.kubeconfig));
  }
  if (!options.url) throw new OptionProblem('url', 'is required (or kubeconfig)');
  const url = webhookUrl(options.url, 'url');
  if (options.caBundle && options.caFile) throw new OptionProblem('caBundle', 'and caFile cannot both be set');
  const ca = options.caBundle
    ? certificates(options.caBundle, 'caBundle')
    : options.caFile
      ? certificates(readText(resolve(rootDir, options.caFile), 'caFile'), 'caFile')
      : undefined;
  if (!options.clientCertFile !== !options.clientKeyFile)
    throw new OptionProblem(options.clientCertFile ? 'clientKeyFile' : 'clientCertFile', 'is required with the other');
  const cert = options.clientCertFile ? certificates(readText(resolve(rootDir, options.clientCertFile), 'clientCertFile'), 'clientCertFile') : undefined;
  const key = options.clientKeyFile ? privateKey(readText(resolve(rootDir, options.clientKeyFile), 'clientKeyFile'), 'clientKeyFile') : undefined;
  return { url, ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
}

interface Named<T> {
  name?: string;
  [field: string]: T | string | undefined;
}

/** One named entry of a kubeconfig list (clusters, users, contexts). */
function entry(list: unknown, field: 'cluster' | 'user' | 'context', name: string | undefined, where: string): Record<string, unknown> {
  const entries = Array.isArray(list) ? (list as Named<Record<string, unknown>>[]) : [];
  const found = name === undefined ? (entries.length === 1 ? entries[0] : undefined) : entries.find((candidate) => candidate?.name === name);
  const value = found?.[field];
  if (typeof value !== 'object' || value === null) {
    throw new OptionProblem(
      'kubeconfig',
      name === undefined ? `${where}: names no current-context, and has not exactly one ${field}` : `${where}: has no ${field} named ${JSON.stringify(name)}`,
    );
  }
  return value as Record<string, unknown>;
}

/** PEM from `<field>-data` (base64) or the file `<field>` names (relative to the kubeconfig's folder). */
function pemField(section: Record<string, unknown>, field: string, file: string): string | undefined {
  const data = section[`${field}-data`];
  if (typeof data === 'string' && data) return Buffer.from(data, 'base64').toString('utf8');
  const path = section[field];
  if (typeof path === 'string' && path) return readText(resolve(dirname(file), path), `kubeconfig (${field})`);
  return undefined;
}

function kubeconfigConnection(file: string): WebhookConnection {
  let config: Record<string, unknown>;
  try {
    const parsed: unknown = parse(readText(file, 'kubeconfig'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a YAML mapping');
    config = parsed as Record<string, unknown>;
  } catch (err) {
    if (err instanceof OptionProblem) throw err;
    // The first line only: the YAML parser quotes the offending line after it, which may hold a token or a key.
    throw new OptionProblem('kubeconfig', `${file}: cannot be parsed: ${(err as Error).message.split('\n')[0]!.replace(/:$/, '')}`);
  }
  const current = typeof config['current-context'] === 'string' && config['current-context'] ? config['current-context'] : undefined;
  const context = current === undefined ? undefined : entry(config.contexts, 'context', current, file);
  const clusterName = typeof context?.cluster === 'string' ? context.cluster : undefined;
  const userName = typeof context?.user === 'string' ? context.user : undefined;
  const cluster = entry(config.clusters, 'cluster', clusterName, file);
  if (cluster['insecure-skip-tls-verify'] === true)
    throw new OptionProblem('kubeconfig', `${file}: insecure-skip-tls-verify is not supported: name the webhook's CA`);
  if (typeof cluster.server !== 'string') throw new OptionProblem('kubeconfig', `${file}: the cluster has no server`);
  const url = webhookUrl(cluster.server, `kubeconfig (${file}: server)`);
  const caPem = pemField(cluster, 'certificate-authority', file);
  const ca = caPem === undefined ? undefined : certificates(caPem, `kubeconfig (${file}: certificate-authority)`);
  const hasUsers = Array.isArray(config.users) && config.users.length > 0;
  const user = hasUsers || userName !== undefined ? entry(config.users, 'user', userName, file) : {};
  const certPem = pemField(user, 'client-certificate', file);
  const keyPem = pemField(user, 'client-key', file);
  if (!certPem !== !keyPem) throw new OptionProblem('kubeconfig', `${file}: the user needs both client-certificate and client-key, or neither`);
  const tokenFile =
    typeof user.tokenFile === 'string' && user.tokenFile ? readText(resolve(dirname(file), user.tokenFile), 'kubeconfig (tokenFile)').trim() : undefined;
  const token = typeof user.token === 'string' && user.token ? user.token : tokenFile;
  return {
    url,
    ...(ca ? { ca } : {}),
    ...(certPem ? { cert: certificates(certPem, `kubeconfig (${file}: client-certificate)`) } : {}),
    ...(keyPem ? { key: privateKey(keyPem, `kubeconfig (${file}: client-key)`) } : {}),
    ...(token ? { token } : {}),
  };
}
