// Serialised objects, by store key and revision. An object's encoding never changes once written, so a list
// answers with the cached text (or protobuf bytes) of each item instead of serialising every object on every
// list (upstream's watch cache keeps encodings for the same reason). Each encoding is bounded by total size;
// least recently used go first.

class EncodingCache<T extends string | Uint8Array> {
  private readonly entries = new Map<string, T>();
  private size = 0;

  constructor(private readonly maxSize: number) {}

  get(key: string, revision: number, encode: () => T): T {
    const id = `${revision}\u0000${key}`;
    const hit = this.entries.get(id);
    if (hit !== undefined) {
      this.entries.delete(id);
      this.entries.set(id, hit);
      return hit;
    }
    const encoded = encode();
    this.entries.set(id, encoded);
    this.size += encoded.length;
    while (this.size > this.maxSize) {
      const oldest = this.entries.keys().next().value as string;
      this.size -= this.entries.get(oldest)!.length;
      this.entries.delete(oldest);
    }
    return encoded;
  }
}

const jsonTexts = new EncodingCache<string>(24 * 1024 * 1024);
const protobufItems = new EncodingCache<Uint8Array>(24 * 1024 * 1024);

/** The JSON text of a stored object at its revision. */
export function cachedJson(key: string, revision: number, object: unknown): string {
  return jsonTexts.get(key, revision, () => JSON.stringify(object));
}

/** The protobuf bytes of a stored object at its revision, as an item of a list (`encode` makes them). */
export function cachedProtobufItem(key: string, revision: number, encode: () => Uint8Array): Uint8Array {
  return protobufItems.get(key, revision, encode);
}
