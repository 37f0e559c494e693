// Budgets for patches and stored objects. Every request runs on the one event loop, so a patch that asks for
// unbounded work (an operation list without end, a copy that doubles the document, a result larger than any body)
// is refused while it is still cheap to refuse.

/** Kubernetes' limit on the operations of one JSON patch (a 413 beyond it). */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;

/** Bytes the `copy` operations of one JSON patch may add in all: Kubernetes' JSONPatchMaxCopyBytes. */
export const MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024;

/**
 * The largest object the API server stores, measured as compact JSON: the request-body limit, so that every
 * stored object can be read and PUT back.
 */
export const MAX_OBJECT_BYTES = 3 * 1024 * 1024;

/** The bytes of a string as JSON text: UTF-8, quoted, escaped as JSON.stringify escapes it. */
function stringBytes(text: string): number {
  // Most strings are short names and plain ASCII: counted here without leaving JavaScript.
  let bytes = 2;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      if (code < 0x20 || code === 0x22 || code === 0x5c) return Buffer.byteLength(JSON.stringify(text));
      bytes += 1;
    } else if (code < 0x800) {
      bytes += 2;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      // Surrogates: a pair is one 4-byte character, a lone one is written as an escape.
      return Buffer.byteLength(JSON.stringify(text));
    } else {
      bytes += 3;
    }
  }
  return bytes;
}

function scalarBytes(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return stringBytes(value);
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    case 'boolean':
      return value ? 4 : 5;
    case 'bigint':
      return String(value).length;
    default:
      // null; undefined and functions inside arrays, which JSON writes as null too.
      return 4;
  }
}

/** Object members JSON.stringify leaves out. */
function omitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/**
 * The byte length of `value`'s compact JSON encoding (what `JSON.stringify` gives), counted without recursion
 * and without building the text. Counting stops once it passes `stopAbove`: the result is then some number
 * above `stopAbove`, so a caller checking a limit pays for at most that many bytes.
 */
export function jsonByteLength(value: unknown, stopAbove = Number.POSITIVE_INFINITY): number {
  let total = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current !== 'object' || current === null) {
      total += scalarBytes(current);
    } else if (Array.isArray(current)) {
      // Brackets and the commas between items.
      total += 2 + Math.max(0, current.length - 1);
      for (const item of current) pending.push(item);
    } else {
      let members = 0;
      for (const key of Object.keys(current)) {
        const item = (current as Record<string, unknown>)[key];
        if (omitted(item)) continue;
        members++;
        // "key": plus the value.
        total += stringBytes(key) + 1;
        pending.push(item);
      }
      total += 2 + Math.max(0, members - 1);
    }
    if (total > stopAbove) return total;
  }
  return total;
}
