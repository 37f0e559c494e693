// Serialised objects, by store key and revision. An object's JSON never changes once written, so a list
// answers with the cached text of each item instead of serialising every object on every list (upstream's
// watch cache keeps encodings for the same reason). Bounded by total size; least recently used go first.

const MAX_CHARS = 24 * 1024 * 1024;

const cache = new Map<string, string>();
let chars = 0;

/** The JSON text of a stored object at its revision. */
export function cachedJson(key: string, revision: number, object: unknown): string {
  const id = `${revision}\u0000${key}`;
  const hit = cache.get(id);
  if (hit !== undefined) {
    cache.delete(id);
    cache.set(id, hit);
    return hit;
  }
  const text = JSON.stringify(object);
  cache.set(id, text);
  chars += text.length;
  while (chars > MAX_CHARS) {
    const oldest = cache.keys().next().value as string;
    chars -= cache.get(oldest)!.length;
    cache.delete(oldest);
  }
  return text;
}
