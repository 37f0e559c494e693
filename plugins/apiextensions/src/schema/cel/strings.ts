// String functions of CEL's string extension in linear time, with Go's semantics (cel-go calls strings.Replace,
// strings.SplitN, …): @bufbuild/cel's replace rebuilds the string for every match (quadratic: a 600 KB
// string blocked the server for minutes), its split drops the remainder of a limited split, and its case
// functions grow a string one character at a time. Their cost is charged before they run (see metered.ts).
import type { CelList } from '@bufbuild/cel';
import { meter, traversal } from './cost.js';

/** Strings at least this long have their code point count cached per validation. */
const CACHED_SIZE_FROM = 256;
const MAX_CACHED_SIZES = 4096;

function codePointCount(s: string): number {
  let count = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

/**
 * `size()` of a string: its code points. Charged as one unit like upstream, so a long string is counted
 * once per validation (a rule may ask for it inside a loop).
 */
export function stringSize(s: string): bigint {
  if (s.length < CACHED_SIZE_FROM) return BigInt(codePointCount(s));
  const sizes = meter().sizes;
  let count = sizes.get(s);
  if (count === undefined) {
    count = codePointCount(s);
    if (sizes.size >= MAX_CACHED_SIZES) sizes.clear();
    sizes.set(s, count);
  }
  return BigInt(count);
}

/** The string's code points as separate strings, at most `limit` of them, the last holding the rest. */
function codePoints(s: string, limit: number): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length && out.length < limit - 1) {
    const c = s.codePointAt(i)!;
    const width = c > 0xffff ? 2 : 1;
    out.push(s.slice(i, i + width));
    i += width;
  }
  if (i < s.length) out.push(s.slice(i));
  return out;
}

/** Builds a result of `length` characters only once its construction is paid for (it may be far longer than the input). */
function chargeResult(length: number): void {
  meter().use(traversal(length));
}

/** Go's strings.Replace: the first `n` non-overlapping instances of `old` replaced (all when n < 0). */
export function replace(s: string, old: string, replacement: string, n = -1n): string {
  if (n === 0n || old === replacement) return s;
  const limit = n < 0n ? Number.POSITIVE_INFINITY : Number(n);
  if (old === '') {
    // An empty `old` matches before every code point and at the end.
    const points = codePoints(s, Number.POSITIVE_INFINITY);
    chargeResult(s.length + Math.min(limit, points.length + 1) * replacement.length);
    const parts: string[] = [];
    let done = 0;
    for (const point of points) {
      if (done < limit) {
        parts.push(replacement);
        done++;
      }
      parts.push(point);
    }
    if (done < limit) parts.push(replacement);
    return parts.join('');
  }
  if (limit === Number.POSITIVE_INFINITY) {
    // Native split and join are the fastest linear way to replace every instance.
    const pieces = s.split(old);
    if (pieces.length === 1) return s;
    chargeResult(s.length + (pieces.length - 1) * (replacement.length - old.length));
    return pieces.join(replacement);
  }
  const parts: string[] = [];
  let from = 0;
  let done = 0;
  while (done < limit) {
    const at = s.indexOf(old, from);
    if (at < 0) break;
    parts.push(s.slice(from, at), replacement);
    from = at + old.length;
    done++;
  }
  if (done === 0) return s;
  parts.push(s.slice(from));
  chargeResult(s.length + done * (replacement.length - old.length));
  return parts.join('');
}

/** Go's strings.SplitN: at most `n` substrings (all when n < 0, none when n == 0), the last one unsplit. */
export function split(s: string, separator: string, n = -1n): string[] {
  if (n === 0n) return [];
  const limit = n < 0n ? Number.POSITIVE_INFINITY : Number(n);
  if (separator === '') return codePoints(s, limit);
  if (limit === Number.POSITIVE_INFINITY) return s.split(separator);
  const out: string[] = [];
  let from = 0;
  while (out.length < limit - 1) {
    const at = s.indexOf(separator, from);
    if (at < 0) break;
    out.push(s.slice(from, at));
    from = at + separator.length;
  }
  out.push(s.slice(from));
  return out;
}

/** The list's strings joined by `separator`; an error for a list holding anything else. */
export function join(list: CelList, separator = ''): string {
  const parts: string[] = [];
  let length = Math.max(0, list.size - 1) * separator.length;
  for (const item of list) {
    if (typeof item !== 'string') throw new Error('invalid argument to function join: list contains non-string value');
    parts.push(item);
    length += item.length;
  }
  // Upstream's cost: walking the result twice, to build and to copy it.
  meter().use(traversal(2 * length));
  return parts.join(separator);
}

/**
 * Shifts the characters from `first` to `last` (an ASCII range) by `delta`, leaving every other code unit
 * as it is (lone surrogates included): one pass over the UTF-16 code units.
 */
function shiftAscii(s: string, pattern: RegExp, first: number, last: number, delta: number): string {
  if (!pattern.test(s)) return s;
  const buffer = Buffer.from(s, 'utf16le');
  const units = new Uint16Array(buffer.buffer, buffer.byteOffset, buffer.length / 2);
  for (let i = 0; i < units.length; i++) {
    const c = units[i]!;
    if (c >= first && c <= last) units[i] = c + delta;
  }
  return buffer.toString('utf16le');
}

export const lowerAscii = (s: string): string => shiftAscii(s, /[A-Z]/, 65, 90, 32);
export const upperAscii = (s: string): string => shiftAscii(s, /[a-z]/, 97, 122, -32);

/** Characters of an integer literal beyond which it cannot fit 64 bits, whatever leading zeros it has. */
const MAX_INTEGER_DIGITS = 20;

/**
 * Refuses an integer text too long for any int64/uint64 before BigInt parses it (parsing a decimal text of
 * a million digits takes seconds); shorter texts are left to the standard conversion.
 */
export function checkIntegerText(text: string, kind: 'int' | 'uint'): void {
  if (text.length <= MAX_INTEGER_DIGITS + 1) return;
  const digits = text.trim().replace(/^[+-]?0*/, '');
  if (digits.length > MAX_INTEGER_DIGITS) throw new Error(`${kind} overflow during type conversion`);
}
