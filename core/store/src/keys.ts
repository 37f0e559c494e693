import { StoreUsageError } from './errors.js';

/**
 * Keys are ordered by LMDB's ordered-binary encoding: plain UTF-8 byte order. U+0000 cannot be
 * encoded in a string key, and U+10FFFF (a noncharacter) is kept out so that `prefix + U+10FFFF`
 * is an exact exclusive upper bound for every key under `prefix`.
 */
const RANGE_END = '\u{10FFFF}';
/** LMDB's 1978-byte limit at the default page size, less the one byte ordered-binary may prepend. */
const MAX_KEY_BYTES = 1977;

export function assertValidKey(key: string): void {
  const fail = (detail: string) => {
    throw new StoreUsageError('SKIFF_ERR_STORE_KEY_INVALID', { key: JSON.stringify(key), detail });
  };
  if (typeof key !== 'string' || key === '') fail('expected a non-empty string');
  if (key.includes('\u0000')) fail('it contains U+0000');
  if (key.includes(RANGE_END)) fail('it contains U+10FFFF');
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) fail(`it is longer than ${MAX_KEY_BYTES} bytes`);
}

/** The exclusive end of the key range holding every key that starts with `prefix`. */
export function prefixEnd(prefix: string): string {
  return prefix + RANGE_END;
}

/** Orders keys exactly as LMDB does. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
