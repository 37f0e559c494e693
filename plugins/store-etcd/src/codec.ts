import type { KubeObject } from '@skiff/api';
import { StoreUsageError, type StoredObject, type ValueSealer } from '@skiff/store';
import { EtcdStoreError } from './errors.js';
import type { KeyValue } from './etcd-client.js';

const OPEN_BRACE = 0x7b;

/**
 * Keys and values as they sit in etcd. A key is the API server's key under the configured prefix. A value is the
 * object's JSON without `metadata.resourceVersion` (etcd's mod_revision is the resourceVersion, as upstream), or,
 * for a key the encryption sealer claims, the sealed JSON (which never starts with `{`).
 */
export class EtcdCodec {
  constructor(
    private readonly keyPrefix: string,
    private readonly maxValueBytes: number,
    private readonly sealer?: ValueSealer,
  ) {}

  key(key: string): Buffer {
    return Buffer.from(this.keyPrefix + key);
  }

  /** The exclusive end of the range of every key that starts with `prefix` (the last byte incremented). */
  rangeEnd(prefix: string): Buffer {
    return prefixEnd(Buffer.from(this.keyPrefix + prefix));
  }

  /** The API server's key of a key etcd answered. */
  keyOf(kv: KeyValue): string {
    return kv.key.toString('utf8').slice(this.keyPrefix.length);
  }

  encode(key: string, object: KubeObject): Buffer {
    const { resourceVersion: _ignored, ...metadata } = object.metadata ?? {};
    const json = Buffer.from(JSON.stringify({ ...{}, ...object, metadata }));
    const value = this.sealer?.seals(key) ? Buffer.from(this.sealer.seal(key, json)) : json;
    if (value.length > this.maxValueBytes)
      throw new EtcdStoreError('SKIFF_ERR_ETCD_VALUE', { key: JSON.stringify(key), detail: `it is ${value.length} bytes, more than ${this.maxValueBytes}` });
    return value;
  }

  /** The object of a stored value, `revision` its resourceVersion. */
  decode(key: string, value: Buffer, revision: number): KubeObject {
    let json: Buffer = value;
    if (value[0] !== OPEN_BRACE) {
      if (!this.sealer) throw new StoreUsageError('SKIFF_ERR_STORE_SEALED', { key: JSON.stringify(key) });
      try {
        json = Buffer.from(this.sealer.open(key, value));
      } catch (err) {
        throw new StoreUsageError('SKIFF_ERR_STORE_UNSEALABLE', { key: JSON.stringify(key), detail: (err as Error).message });
      }
    }
    let object: KubeObject;
    try {
      object = JSON.parse(json.toString('utf8')) as KubeObject;
    } catch (err) {
      throw new EtcdStoreError('SKIFF_ERR_ETCD_CORRUPT', { key: JSON.stringify(key), detail: (err as Error).message });
    }
    object.metadata = { ...{}, ...object.metadata, resourceVersion: String(revision) };
    return object;
  }

  stored(kv: KeyValue): StoredObject {
    const key = this.keyOf(kv);
    return { key, object: this.decode(key, kv.value, kv.mod_revision), revision: kv.mod_revision };
  }
}

export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1;
      return end.subarray(0, i + 1);
    }
  }
  // Every byte is 0xff: the range runs to the end of the keyspace.
  return Buffer.from([0]);
}

/** Freezes an object and everything in it: watch events and list items are shared between readers. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
