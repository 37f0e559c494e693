import { describe, expect, it } from 'vitest';
import { WIRE_TYPE, WireReader, WireWriter } from './wire.js';

const roundTrip = (write: (w: WireWriter) => void, read: (r: WireReader) => unknown) => {
  const writer = new WireWriter();
  write(writer);
  return read(new WireReader(writer.finish()));
};

describe('protobuf wire format', () => {
  it('reads the varints protobuf writes (the spec example: 150 is 96 01)', () => {
    expect(new WireReader(Uint8Array.from([0x96, 0x01])).varint()).toBe(150);
    expect(Array.from(new WireWriter().varint(150).finish())).toEqual([0x96, 0x01]);
    expect(Array.from(new WireWriter().tag(1, WIRE_TYPE.VARINT).finish())).toEqual([0x08]);
  });

  it('round-trips unsigned and signed 64-bit varints, negative int32 as ten bytes', () => {
    for (const value of [0, 1, 127, 128, 300, 2 ** 31, 2 ** 32 + 5, 2 ** 53 - 1])
      expect(
        roundTrip(
          (w) => w.varint(value),
          (r) => r.varint(),
        ),
      ).toBe(value);
    for (const value of [-1, -2, -150, -(2 ** 31), -(2 ** 53 - 1)])
      expect(
        roundTrip(
          (w) => w.varint(value),
          (r) => r.signedVarint(),
        ),
      ).toBe(value);
    expect(new WireWriter().varint(-1).finish()).toHaveLength(10);
    expect(
      roundTrip(
        (w) => w.varint(2 ** 40),
        (r) => r.signedVarint(),
      ),
    ).toBe(2 ** 40);
  });

  it('round-trips strings, bytes, doubles and nested messages, and skips unknown fields', () => {
    const inner = new WireWriter().tag(1, WIRE_TYPE.LENGTH_DELIMITED).string('héllo');
    const outer = new WireWriter()
      .tag(7, WIRE_TYPE.VARINT)
      .varint(99)
      .tag(2, WIRE_TYPE.LENGTH_DELIMITED)
      .message(inner)
      .tag(3, WIRE_TYPE.FIXED64)
      .double(1.5)
      .tag(4, WIRE_TYPE.LENGTH_DELIMITED)
      .bytesField(Uint8Array.from([0, 255]));
    const reader = new WireReader(outer.finish());
    const seen: Record<number, unknown> = {};
    while (!reader.done) {
      const { field, wireType } = reader.tag();
      if (field === 2) {
        const nested = reader.bytesField();
        const nestedReader = new WireReader(nested);
        nestedReader.tag();
        seen[2] = nestedReader.string();
      } else if (field === 3) seen[3] = reader.double();
      else if (field === 4) seen[4] = Array.from(reader.bytesField());
      else reader.skip(wireType);
    }
    expect(seen).toEqual({ 2: 'héllo', 3: 1.5, 4: [0, 255] });
  });

  it('refuses truncated and malformed input with a WireError', () => {
    expect(() => new WireReader(Uint8Array.from([0x96])).varint()).toThrow('truncated varint');
    expect(() => new WireReader(Uint8Array.from(new Array(11).fill(0xff))).varint()).toThrow('varint longer than 10 bytes');
    expect(() => new WireReader(Uint8Array.from([0x0a, 0x05, 0x61])).skip(2)).toThrow();
    const badTag = new WireReader(Uint8Array.from([0x0a, 0x05, 0x61]));
    badTag.tag();
    expect(() => badTag.bytesField()).toThrow('runs past the end');
    expect(() => new WireReader(Uint8Array.from([0x00])).tag()).toThrow('invalid field number 0');
    expect(() => new WireReader(Uint8Array.from([0x0a, 0x02, 0xff, 0xfe])).skip(3)).toThrow('unsupported wire type 3');
    const notUtf8 = new WireReader(Uint8Array.from([0x02, 0xff, 0xfe]));
    expect(() => notUtf8.string()).toThrow('not valid UTF-8');
  });
});
