import type { Logger } from '@skiff/kernel';
import type { ValueSealer } from '@skiff/store';
import type { EtcdTls } from './etcd-client.js';
import { EtcdStoreError } from './errors.js';

export interface EtcdStoreOptions {
  /** `http://host:port` (or `https://`) of each etcd member. */
  endpoints: string[];
  /** Put before every key, so that several clusters can share one etcd. Default: none (keys are `/registry/…`). */
  keyPrefix?: string;
  tls?: EtcdTls;
  /** How often the API servers compact etcd up to the revision of the previous interval; 0 turns it off. Default 5 min, as upstream. */
  compactionIntervalMs?: number;
  /** Recent events kept in memory for watches that start a little in the past. Default 10000. */
  watchCacheSize?: number;
  /** How often the store asks etcd how far its watch has delivered. Default 1000 ms. */
  progressIntervalMs?: number;
  /** The deadline of one etcd call. Default 15 s. */
  callTimeoutMs?: number;
  /** How long a call or a watch keeps trying other members before it fails. Default 30 s. */
  retryForMs?: number;
  /** The largest value written, in bytes: etcd's own request limit (1.5 MiB by default). */
  maxValueBytes?: number;
  logger?: Logger;
  sealer?: ValueSealer;
}

export type ResolvedEtcdStoreOptions = Required<Omit<EtcdStoreOptions, 'logger' | 'sealer' | 'tls'>> & Pick<EtcdStoreOptions, 'logger' | 'sealer' | 'tls'>;

export const ETCD_STORE_DEFAULTS = Object.freeze({
  keyPrefix: '',
  compactionIntervalMs: 300_000,
  watchCacheSize: 10_000,
  progressIntervalMs: 1_000,
  callTimeoutMs: 15_000,
  retryForMs: 30_000,
  maxValueBytes: 1_572_864,
});

export function resolveEtcdStoreOptions(options: EtcdStoreOptions): ResolvedEtcdStoreOptions {
  const invalid = (detail: string) => new EtcdStoreError('SKIFF_ERR_ETCD_OPTIONS', { detail });
  if (!Array.isArray(options.endpoints) || options.endpoints.length === 0) throw invalid('endpoints: name at least one etcd member (http://host:port)');
  for (const endpoint of options.endpoints) {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw invalid(`endpoints: "${endpoint}" is not a URL (http://host:port)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(`endpoints: "${endpoint}" must start with http:// or https://`);
    if (!url.port) throw invalid(`endpoints: "${endpoint}" names no port (etcd's client port is usually 2379)`);
  }
  const keyPrefix = options.keyPrefix ?? ETCD_STORE_DEFAULTS.keyPrefix;
  if (keyPrefix !== '' && (!keyPrefix.startsWith('/') || keyPrefix.endsWith('/')))
    throw invalid(`keyPrefix: "${keyPrefix}" must start with "/" and not end with one`);
  return {
    ...{},
    ...ETCD_STORE_DEFAULTS,
    ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)),
    endpoints: options.endpoints,
    keyPrefix,
  } as ResolvedEtcdStoreOptions;
}
