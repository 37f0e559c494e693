import type { KubeObject } from '@skiff/api';
import { StoreUsageError } from './errors.js';
import type { LogRecord } from './databases.js';

/**
 * Encrypts the values of some keys before they reach the LMDB file (encryption at rest). A plugin provides one
 * as the `storageSealer` component; the store seals every object it writes under a key the sealer claims — in
 * the objects database and in the event log — and opens sealed values wherever it reads them. Plaintext is the
 * object's JSON; the key is the authenticated data, so a sealed value moved to another key does not open.
 */
export interface ValueSealer {
  /** Whether objects under `key` are to be sealed when written. */
  seals(key: string): boolean;
  /** The sealed form of `plaintext` for `key`, with whatever prefix names the key that sealed it. */
  seal(key: string, plaintext: Uint8Array): Uint8Array;
  /** The plaintext of a value `seal` made; throws when no configured key opens it. */
  open(key: string, sealed: Uint8Array): Uint8Array;
  /** Whether `sealed` was made with the key `seal` uses now (a value that is not gets sealed again at start). */
  isCurrent(key: string, sealed: Uint8Array): boolean;
}

/** How a sealed value sits in LMDB: one binary field, nothing of the object readable. */
export interface SealedValue {
  $sealed: Uint8Array;
}

export function isSealed(value: unknown): value is SealedValue {
  return typeof value === 'object' && value !== null && '$sealed' in value;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Seals and opens values for the store; without a sealer values pass as they are (and sealed ones cannot be read). */
export class StoreCodec {
  constructor(readonly sealer?: ValueSealer) {}

  /** The value to write for `object` at `key`. */
  toDisk(key: string, object: KubeObject): KubeObject {
    if (!this.sealer?.seals(key)) return object;
    return { $sealed: this.sealer.seal(key, encoder.encode(JSON.stringify(object))) } as unknown as KubeObject;
  }

  /** The object a value read from disk holds. */
  fromDisk(key: string, value: KubeObject): KubeObject;
  fromDisk(key: string, value: KubeObject | undefined): KubeObject | undefined;
  fromDisk(key: string, value: KubeObject | undefined): KubeObject | undefined {
    if (!isSealed(value)) return value;
    if (!this.sealer) throw new StoreUsageError('SKIFF_ERR_STORE_SEALED', { key: JSON.stringify(key) });
    let plaintext: Uint8Array;
    try {
      plaintext = this.sealer.open(key, value.$sealed);
    } catch (err) {
      throw new StoreUsageError('SKIFF_ERR_STORE_UNSEALABLE', { key: JSON.stringify(key), detail: err instanceof Error ? err.message : String(err) });
    }
    return JSON.parse(decoder.decode(plaintext)) as KubeObject;
  }

  recordToDisk(record: LogRecord): LogRecord {
    if (!this.sealer?.seals(record.key)) return record;
    const sealed: LogRecord = { type: record.type, key: record.key, object: this.toDisk(record.key, record.object) };
    if (record.prevObject) sealed.prevObject = this.toDisk(record.key, record.prevObject);
    return sealed;
  }

  recordFromDisk(record: LogRecord): LogRecord {
    if (!isSealed(record.object) && !isSealed(record.prevObject)) return record;
    const opened: LogRecord = { type: record.type, key: record.key, object: this.fromDisk(record.key, record.object) };
    if (record.prevObject) opened.prevObject = this.fromDisk(record.key, record.prevObject);
    return opened;
  }

  /** Whether a stored value at `key` is not in the form the sealer would write now (plain, or sealed with an older key). */
  isStale(key: string, value: unknown): boolean {
    if (!this.sealer) return false;
    const wanted = this.sealer.seals(key);
    if (!isSealed(value)) return wanted;
    return !wanted || !this.sealer.isCurrent(key, value.$sealed);
  }
}
