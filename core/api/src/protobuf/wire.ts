/**
 * The protobuf wire format, as much of it as Kubernetes' messages use: varints (int32, int64, uint64,
 * bool, enums), 64- and 32-bit fixed values (double, float), and length-delimited fields (strings,
 * bytes, embedded messages, packed repeated scalars). Field numbers and types come from the API facts
 * table; this layer only reads and writes bytes.
 */

export const WIRE_TYPE = Object.freeze({ VARINT: 0, FIXED64: 1, LENGTH_DELIMITED: 2, FIXED32: 5 });

export class WireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireError';
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const TWO_32 = 2 ** 32;

/** Reads one message's fields from `bytes[start, end)`. */
export class WireReader {
  private position: number;
  private readonly view: DataView;

  constructor(
    private readonly bytes: Uint8Array,
    start = 0,
    private readonly end = bytes.length,
  ) {
    this.position = start;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get done(): boolean {
    return this.position >= this.end;
  }

  /** The next field's number and wire type. */
  tag(): { field: number; wireType: number } {
    const tag = this.varint();
    const field = Math.floor(tag / 8);
    if (field < 1) throw new WireError(`invalid field number ${field} at byte ${this.position}`);
    return { field, wireType: tag % 8 };
  }

  /**
   * A varint as a non-negative number (lengths, tags, uint64, bool, enums). Values past 2^53 are
   * rounded, as JSON numbers are in Kubernetes' own JSON.
   */
  varint(): number {
    const [low, high] = this.varint64();
    return high * TWO_32 + low;
  }

  /** A varint as a signed 64-bit integer (int64, and int32, which protobuf sign-extends to 64 bits). */
  signedVarint(): number {
    const [low, high] = this.varint64();
    if (high < 0x80000000) return high * TWO_32 + low;
    // Two's complement: the magnitude is the bitwise complement plus one.
    return -((~high >>> 0) * TWO_32 + (~low >>> 0) + 1);
  }

  /** The low and high 32 bits of a varint, unsigned. */
  private varint64(): [number, number] {
    let low = 0;
    let high = 0;
    for (let i = 0, shift = 0; i < 10; i++, shift += 7) {
      if (this.position >= this.end) throw new WireError('truncated varint');
      const byte = this.bytes[this.position++]!;
      const bits = byte & 0x7f;
      if (shift < 28) low |= bits << shift;
      else if (shift === 28) {
        low |= (bits & 0x0f) << 28;
        high |= bits >> 4;
      } else high |= bits << (shift - 32);
      if ((byte & 0x80) === 0) return [low >>> 0, high >>> 0];
    }
    throw new WireError('varint longer than 10 bytes');
  }

  double(): number {
    this.need(8);
    const value = this.view.getFloat64(this.position, true);
    this.position += 8;
    return value;
  }

  float(): number {
    this.need(4);
    const value = this.view.getFloat32(this.position, true);
    this.position += 4;
    return value;
  }

  fixed64(): number {
    this.need(8);
    const low = this.view.getUint32(this.position, true);
    const high = this.view.getUint32(this.position + 4, true);
    this.position += 8;
    return high * TWO_32 + low;
  }

  fixed32(): number {
    this.need(4);
    const value = this.view.getUint32(this.position, true);
    this.position += 4;
    return value;
  }

  /** A length-delimited field's bytes (a view, not a copy). */
  bytesField(): Uint8Array {
    const length = this.varint();
    this.need(length);
    const value = this.bytes.subarray(this.position, this.position + length);
    this.position += length;
    return value;
  }

  string(): string {
    try {
      return utf8.decode(this.bytesField());
    } catch (err) {
      if (err instanceof WireError) throw err;
      throw new WireError('a string field is not valid UTF-8');
    }
  }

  /** Skips a field of the given wire type (unknown fields, as protobuf allows). */
  skip(wireType: number): void {
    switch (wireType) {
      case WIRE_TYPE.VARINT:
        this.varint();
        return;
      case WIRE_TYPE.FIXED64:
        this.need(8);
        this.position += 8;
        return;
      case WIRE_TYPE.LENGTH_DELIMITED:
        this.bytesField();
        return;
      case WIRE_TYPE.FIXED32:
        this.need(4);
        this.position += 4;
        return;
      default:
        throw new WireError(`unsupported wire type ${wireType}`);
    }
  }

  private need(length: number): void {
    if (this.position + length > this.end) throw new WireError(`field runs past the end of its message (${length} bytes at byte ${this.position})`);
  }
}

// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

/** Builds a message; nested messages are written into their own writer and added with `message`. */
export class WireWriter {
  // One growing buffer: bytes are written in place, and a nested message is copied in once when it is done.
  private buffer: Buffer;
  private length = 0;

  constructor(capacity = 64) {
    this.buffer = Buffer.allocUnsafe(capacity);
  }

  tag(field: number, wireType: number): this {
    return this.varint(field * 8 + wireType);
  }

  /** A non-negative varint (lengths, uint64, bool, non-negative int64). */
  varint(value: number): this {
    if (value < 0) return this.negativeVarint(value);
    this.reserve(10);
    let rest = value;
    while (rest >= 0x80) {
      this.buffer[this.length++] = rest % 0x80 | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    this.buffer[this.length++] = rest;
    return this;
  }

  double(value: number): this {
    this.reserve(8);
    this.buffer.writeDoubleLE(value, this.length);
    this.length += 8;
    return this;
  }

  bytesField(value: Uint8Array): this {
    this.varint(value.length);
    this.reserve(value.length);
    this.buffer.set(value, this.length);
    this.length += value.length;
    return this;
  }

  string(value: string): this {
    // Short ASCII strings (names, keys, most values) are copied by hand: cheaper than a call into the encoder.
    if (value.length < 64 && ASCII.test(value)) {
      this.varint(value.length);
      this.reserve(value.length);
      for (let i = 0; i < value.length; i++) this.buffer[this.length++] = value.charCodeAt(i);
      return this;
    }
    const size = Buffer.byteLength(value, 'utf8');
    this.varint(size);
    this.reserve(size);
    this.length += this.buffer.write(value, this.length, size, 'utf8');
    return this;
  }

  message(nested: WireWriter): this {
    return this.bytesField(nested.finish());
  }

  /** The bytes written so far (a view of this writer's buffer: write nothing more once it is taken). */
  finish(): Uint8Array {
    return new Uint8Array(this.buffer.buffer, this.buffer.byteOffset, this.length);
  }

  /** Negative int32/int64 values: two's complement over 64 bits, ten bytes, as protobuf writes them. */
  private negativeVarint(value: number): this {
    this.reserve(10);
    let big = BigInt.asUintN(64, BigInt(Math.trunc(value)));
    while (big >= 0x80n) {
      this.buffer[this.length++] = Number(big & 0x7fn) | 0x80;
      big >>= 7n;
    }
    this.buffer[this.length++] = Number(big);
    return this;
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}
