import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { writeFileAtomically } from '@skiff/kernel';
import { AesGcmProvider, IdentityProvider, type Provider } from './providers.js';

/** One `resources` entry of an EncryptionConfiguration (apiserver.config.k8s.io/v1), as far as this plugin reads it. */
export interface ResourceEncryption {
  resources: string[];
  providers: ProviderConfig[];
}

export type ProviderConfig = { aesgcm: { keys: { name: string; secret: string }[] } } | { identity: Record<string, never> };

/** The store key prefixes and the providers for them, in the configuration's order (the first match wins). */
export interface EncryptionRule {
  resource: string;
  prefix: string;
  providers: Provider[];
}

/** A mistake in the configuration, with the path of the field (`resources[0].providers[1].aesgcm.keys[0].secret`). */
export class EncryptionConfigError extends Error {}

const SUPPORTED = ['aesgcm', 'identity'];
const KNOWN_UNSUPPORTED = ['aescbc', 'secretbox', 'kms'];

/**
 * Store key prefixes for a resource as EncryptionConfiguration names it: `secrets` (core), `widgets.example.com`,
 * `*.apps` (every resource of a group), `*.*` (everything). `*.` (every core resource) has no prefix of its own in
 * the key layout, so it is refused rather than approximated.
 */
export function keyPrefix(resource: string, at: string): string {
  if (resource === '*.*') return '/registry/';
  if (resource === '*.') throw new EncryptionConfigError(`${at}: "*." (every core resource) is not supported; name the core resources one by one`);
  const dot = resource.indexOf('.');
  const name = dot < 0 ? resource : resource.slice(0, dot);
  const group = dot < 0 ? '' : resource.slice(dot + 1);
  if (!/^(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?)$/.test(name) || (group && !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(group)))
    throw new EncryptionConfigError(`${at}: ${JSON.stringify(resource)} is not a resource name (resource or resource.group)`);
  if (name === '*') {
    if (!group) throw new EncryptionConfigError(`${at}: "*" needs a group ("*.apps")`);
    return `/registry/${group}/`;
  }
  return group ? `/registry/${group}/${name}/` : `/registry/${name}/`;
}

function provider(config: unknown, at: string): Provider[] {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) throw new EncryptionConfigError(`${at}: expected an object`);
  const kinds = Object.keys(config);
  if (kinds.length !== 1) throw new EncryptionConfigError(`${at}: exactly one provider per entry (found ${kinds.length ? kinds.join(', ') : 'none'})`);
  const kind = kinds[0]!;
  if (kind === 'identity') return [new IdentityProvider()];
  if (kind !== 'aesgcm') {
    const why = KNOWN_UNSUPPORTED.includes(kind) ? 'is not supported by this plugin' : 'is not a provider';
    throw new EncryptionConfigError(`${at}.${kind}: ${why} (supported: ${SUPPORTED.join(', ')})`);
  }
  const keys = (config as { aesgcm?: { keys?: unknown } }).aesgcm?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new EncryptionConfigError(`${at}.aesgcm.keys: at least one key is required`);
  const names = new Set<string>();
  return keys.map((key: unknown, index) => {
    const keyAt = `${at}.aesgcm.keys[${index}]`;
    const { name, secret } = (key ?? {}) as { name?: unknown; secret?: unknown };
    if (typeof name !== 'string' || name === '' || name.includes(':'))
      throw new EncryptionConfigError(`${keyAt}.name: a non-empty name without ":" is required`);
    if (names.has(name)) throw new EncryptionConfigError(`${keyAt}.name: ${JSON.stringify(name)} is used twice`);
    names.add(name);
    const bytes = typeof secret === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(secret) ? Buffer.from(secret, 'base64') : undefined;
    if (!bytes || ![16, 24, 32].includes(bytes.length))
      throw new EncryptionConfigError(`${keyAt}.secret: must be the base64 of a 16, 24 or 32 byte key (head -c 32 /dev/urandom | base64)`);
    return new AesGcmProvider(name, bytes);
  });
}

/** The rules of an EncryptionConfiguration's `resources`, checked field by field. */
export function encryptionRules(resources: unknown): EncryptionRule[] {
  if (!Array.isArray(resources) || resources.length === 0) throw new EncryptionConfigError('resources: at least one entry is required');
  const rules: EncryptionRule[] = [];
  resources.forEach((entry: unknown, index) => {
    const at = `resources[${index}]`;
    const { resources: names, providers } = (entry ?? {}) as { resources?: unknown; providers?: unknown };
    if (!Array.isArray(names) || names.length === 0) throw new EncryptionConfigError(`${at}.resources: at least one resource is required`);
    if (!Array.isArray(providers) || providers.length === 0) throw new EncryptionConfigError(`${at}.providers: at least one provider is required`);
    const chain = providers.flatMap((config: unknown, p) => provider(config, `${at}.providers[${p}]`));
    names.forEach((name: unknown, n) => {
      if (typeof name !== 'string') throw new EncryptionConfigError(`${at}.resources[${n}]: expected a string`);
      rules.push({ resource: name, prefix: keyPrefix(name, `${at}.resources[${n}]`), providers: chain });
    });
  });
  return rules;
}

/** Reads an EncryptionConfiguration file (YAML or JSON). */
export function readEncryptionConfiguration(file: string): unknown {
  let document: unknown;
  try {
    document = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    // The first line only: the YAML parser quotes the offending line after it, which may hold a key's secret.
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.replace(/:$/, '');
    throw new EncryptionConfigError(`${file}: ${message}`);
  }
  const { kind, apiVersion, resources } = (document ?? {}) as { kind?: unknown; apiVersion?: unknown; resources?: unknown };
  if (kind !== 'EncryptionConfiguration' || apiVersion !== 'apiserver.config.k8s.io/v1')
    throw new EncryptionConfigError(`${file}: expected kind EncryptionConfiguration, apiVersion apiserver.config.k8s.io/v1`);
  return resources;
}

/**
 * The configuration a cluster gets when it names none: Secrets sealed with one fresh 256-bit AES-GCM key, written
 * once to `file` (mode 0600) and read from there afterwards, so restarts keep the key and an operator rotates it by
 * editing the file.
 */
export function ensureGeneratedConfiguration(file: string): void {
  if (existsSync(file)) return;
  const configuration = {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'EncryptionConfiguration',
    resources: [
      { resources: ['secrets'], providers: [{ aesgcm: { keys: [{ name: 'key1', secret: randomBytes(32).toString('base64') }] } }, { identity: {} }] },
    ],
  };
  writeFileAtomically(file, stringify(configuration), 0o600);
}
