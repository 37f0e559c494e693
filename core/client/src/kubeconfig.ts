import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { errorMessage } from '@skiff/api';
import { writeFileAtomically } from '@skiff/kernel';
import { dropUndefined } from './drop-undefined.js';
import { ClientError } from './errors.js';

/** Everything a client needs from one kubeconfig context, with file references already read. */
export interface KubeconfigConnection {
  context: string;
  server: string;
  caPem?: string;
  token?: string;
  certPem?: string;
  keyPem?: string;
  insecureSkipTlsVerify?: boolean;
  /** The context's namespace, `default` when it names none. */
  namespace: string;
}

type YamlMap = Record<string, unknown>;

/** Reads a kubeconfig file and resolves `context` (the file's current-context by default). */
export function readKubeconfig(path: string, context?: string): KubeconfigConnection {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ClientError('SKIFF_ERR_CLIENT_KUBECONFIG_READ', { file: path, detail: errorMessage(err) }, { cause: err });
  }
  return parseKubeconfig(text, { file: path, context });
}

/** Parses kubeconfig YAML; relative file references are resolved against the folder of `file`, as kubectl does. */
export function parseKubeconfig(text: string, options: { file: string; context?: string }): KubeconfigConnection {
  const { file } = options;
  const invalid = (detail: string) => new ClientError('SKIFF_ERR_CLIENT_KUBECONFIG_INVALID', { file, detail });
  let config: unknown;
  try {
    config = parse(text);
  } catch (err) {
    throw new ClientError('SKIFF_ERR_CLIENT_KUBECONFIG_INVALID', { file, detail: errorMessage(err) }, { cause: err });
  }
  if (!isMap(config)) throw invalid('expected a YAML mapping at the top level');

  const contextName = options.context ?? stringField(config, 'current-context', '', invalid);
  if (!contextName) throw invalid('no context given and current-context is not set');
  const contexts = namedEntries(config, 'contexts', 'context', invalid);
  const context = contexts.get(contextName);
  if (!context) {
    throw new ClientError('SKIFF_ERR_CLIENT_KUBECONFIG_CONTEXT', {
      file,
      context: contextName,
      available: [...contexts.keys()].join(', ') || 'none',
    });
  }
  const at = `contexts[${contextName}].context`;
  const clusterName = stringField(context, 'cluster', at, invalid);
  if (!clusterName) throw invalid(`${at}.cluster is missing`);
  const cluster = namedEntries(config, 'clusters', 'cluster', invalid).get(clusterName);
  if (!cluster) throw invalid(`${at} names cluster "${clusterName}", which is not in clusters`);
  const userName = stringField(context, 'user', at, invalid);
  const user = userName ? namedEntries(config, 'users', 'user', invalid).get(userName) : {};
  if (!user) throw invalid(`${at} names user "${userName}", which is not in users`);

  const clusterAt = `clusters[${clusterName}].cluster`;
  const userAt = `users[${userName}].user`;
  const server = stringField(cluster, 'server', clusterAt, invalid);
  if (!server) throw invalid(`${clusterAt}.server is missing`);
  const baseDir = dirname(resolve(file));
  const readRef = (owner: YamlMap, key: string, ownerAt: string): string | undefined => {
    const data = stringField(owner, `${key}-data`, ownerAt, invalid);
    if (data) return Buffer.from(data, 'base64').toString('utf8');
    const refPath = stringField(owner, key, ownerAt, invalid);
    return refPath ? readReferencedFile(resolve(baseDir, refPath), `${ownerAt}.${key}`, invalid) : undefined;
  };
  const tokenFile = stringField(user, 'tokenFile', userAt, invalid);

  return dropUndefined({
    context: contextName,
    server,
    caPem: readRef(cluster, 'certificate-authority', clusterAt),
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true ? true : undefined,
    token:
      stringField(user, 'token', userAt, invalid) ??
      (tokenFile ? readReferencedFile(resolve(baseDir, tokenFile), `${userAt}.tokenFile`, invalid).trim() : undefined),
    certPem: readRef(user, 'client-certificate', userAt),
    keyPem: readRef(user, 'client-key', userAt),
    namespace: stringField(context, 'namespace', at, invalid) || 'default',
  });
}

export interface KubeconfigSpec {
  server: string;
  caPem?: string;
  token?: string;
  certPem?: string;
  keyPem?: string;
  insecureSkipTlsVerify?: boolean;
  namespace?: string;
  /** Names of the one cluster, user and context written; all default to `skiff`. */
  clusterName?: string;
  userName?: string;
  contextName?: string;
}

/** Builds a self-contained kubeconfig (certificates embedded as `*-data`) with one context, made current. */
export function buildKubeconfig(spec: KubeconfigSpec): string {
  const clusterName = spec.clusterName ?? 'skiff';
  const userName = spec.userName ?? 'skiff';
  const contextName = spec.contextName ?? 'skiff';
  const base64 = (pem: string | undefined) => (pem === undefined ? undefined : Buffer.from(pem, 'utf8').toString('base64'));
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [
      {
        name: clusterName,
        cluster: dropUndefined({
          server: spec.server,
          'certificate-authority-data': base64(spec.caPem),
          'insecure-skip-tls-verify': spec.insecureSkipTlsVerify || undefined,
        }),
      },
    ],
    users: [
      {
        name: userName,
        user: dropUndefined({
          token: spec.token,
          'client-certificate-data': base64(spec.certPem),
          'client-key-data': base64(spec.keyPem),
        }),
      },
    ],
    contexts: [{ name: contextName, context: dropUndefined({ cluster: clusterName, user: userName, namespace: spec.namespace }) }],
    'current-context': contextName,
  });
}

/**
 * Writes `buildKubeconfig(spec)` to `path`, readable by its owner only (it holds credentials), and atomically: a
 * client reading the file while it is rewritten (at every start) sees the old one or the new one, never a part.
 */
export function writeKubeconfig(path: string, spec: KubeconfigSpec): void {
  writeFileAtomically(path, buildKubeconfig(spec), 0o600);
}

function isMap(value: unknown): value is YamlMap {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A `[{ name, <field>: {...} }]` list (clusters, users, contexts) as a map by name. */
function namedEntries(config: YamlMap, list: string, field: string, invalid: (detail: string) => Error): Map<string, YamlMap> {
  const entries = config[list] ?? [];
  if (!Array.isArray(entries)) throw invalid(`${list} must be a list`);
  const byName = new Map<string, YamlMap>();
  entries.forEach((entry: unknown, i) => {
    if (!isMap(entry) || typeof entry.name !== 'string') throw invalid(`${list}[${i}] needs a name`);
    const body = entry[field] ?? {};
    if (!isMap(body)) throw invalid(`${list}[${entry.name}].${field} must be a mapping`);
    byName.set(entry.name, body);
  });
  return byName;
}

function stringField(owner: YamlMap, key: string, at: string, invalid: (detail: string) => Error): string | undefined {
  const value = owner[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(`${at ? `${at}.` : ''}${key} must be a string`);
  return value;
}

function readReferencedFile(path: string, at: string, invalid: (detail: string) => Error): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw invalid(`${at}: cannot read ${path}: ${errorMessage(err)}`);
  }
}
