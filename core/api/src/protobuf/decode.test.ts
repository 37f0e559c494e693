import { describe, expect, it } from 'vitest';
import { decodeMessage, goDuration, type ProtoMessageFacts } from './decode.js';
import { encodeMessage } from './encode.js';
import { WIRE_TYPE as W, WireWriter } from './wire.js';

// A made-up schema in the shape of the API facts table, using the special apimachinery messages.
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const MESSAGES: ProtoMessageFacts[] = [
  {
    name: 'test.Thing',
    fields: [
      { name: 'metadata', number: 1, type: 'test.Meta' },
      { name: 'replicas', number: 2, type: 'int32' },
      { name: 'paused', number: 3, type: 'bool' },
      { name: 'data', number: 4, type: 'bytes', map: { key: 'string', value: 'bytes' } },
      { name: 'ports', number: 5, type: 'int32', repeated: true },
      { name: 'cpu', number: 6, type: 'k8s.io.apimachinery.pkg.api.resource.Quantity' },
      { name: 'port', number: 7, type: 'k8s.io.apimachinery.pkg.util.intstr.IntOrString' },
      { name: 'target', number: 8, type: 'k8s.io.apimachinery.pkg.util.intstr.IntOrString' },
      { name: 'timeout', number: 9, type: `${META}.Duration` },
      { name: 'extension', number: 10, type: 'k8s.io.apimachinery.pkg.runtime.RawExtension' },
      { name: 'children', number: 11, type: 'test.Thing', repeated: true },
      { name: 'ratio', number: 12, type: 'double' },
      { name: 'offset', number: 13, type: 'int64' },
    ],
  },
  {
    name: 'test.Meta',
    fields: [
      { name: 'name', number: 1, type: 'string' },
      { name: 'labels', number: 2, type: 'string', map: { key: 'string', value: 'string' } },
      { name: 'creationTimestamp', number: 3, type: `${META}.Time` },
      { name: 'renewTime', number: 4, type: `${META}.MicroTime` },
    ],
  },
];
const lookup = (name: string) => MESSAGES.find((message) => message.name === name);

const nested = (build: (w: WireWriter) => WireWriter) => build(new WireWriter());
const entry = (key: string, value: string | Uint8Array) =>
  nested((w) =>
    w
      .tag(1, W.LENGTH_DELIMITED)
      .string(key)
      .tag(2, W.LENGTH_DELIMITED)
      .bytesField(typeof value === 'string' ? Buffer.from(value) : value),
  );

describe('decoding protobuf objects to their JSON form', () => {
  it('maps fields by number to JSON names, with Kubernetes JSON for the special types', () => {
    const meta = nested((w) =>
      w
        .tag(1, W.LENGTH_DELIMITED)
        .string('web')
        .tag(2, W.LENGTH_DELIMITED)
        .message(entry('app', 'web'))
        .tag(2, W.LENGTH_DELIMITED)
        .message(entry('tier', 'front'))
        .tag(3, W.LENGTH_DELIMITED)
        .message(nested((t) => t.tag(1, W.VARINT).varint(1_700_000_000)))
        .tag(4, W.LENGTH_DELIMITED)
        .message(nested((t) => t.tag(1, W.VARINT).varint(1_700_000_000).tag(2, W.VARINT).varint(123_456_000))),
    );
    const bytes = nested((w) =>
      w
        .tag(1, W.LENGTH_DELIMITED)
        .message(meta)
        .tag(2, W.VARINT)
        .varint(0)
        .tag(3, W.VARINT)
        .varint(1)
        .tag(4, W.LENGTH_DELIMITED)
        .message(entry('key', Uint8Array.from([0, 1, 255])))
        .tag(5, W.VARINT)
        .varint(80)
        .tag(5, W.LENGTH_DELIMITED)
        .bytesField(Uint8Array.from([0xbb, 0x03, 0x90, 0x3f]))
        .tag(6, W.LENGTH_DELIMITED)
        .message(nested((q) => q.tag(1, W.LENGTH_DELIMITED).string('500m')))
        .tag(7, W.LENGTH_DELIMITED)
        .message(nested((p) => p.tag(1, W.VARINT).varint(0).tag(2, W.VARINT).varint(8080)))
        .tag(8, W.LENGTH_DELIMITED)
        .message(nested((p) => p.tag(1, W.VARINT).varint(1).tag(3, W.LENGTH_DELIMITED).string('http')))
        .tag(9, W.LENGTH_DELIMITED)
        .message(nested((d) => d.tag(1, W.VARINT).varint(90_500_000_000)))
        .tag(10, W.LENGTH_DELIMITED)
        .message(nested((r) => r.tag(1, W.LENGTH_DELIMITED).string('{"kind":"Widget","size":3}')))
        .tag(11, W.LENGTH_DELIMITED)
        .message(nested((c) => c.tag(2, W.VARINT).varint(2)))
        .tag(12, W.FIXED64)
        .double(0.25)
        .tag(13, W.VARINT)
        .varint(-7)
        .tag(99, W.LENGTH_DELIMITED)
        .string('a field this schema does not know'),
    ).finish();
    expect(decodeMessage(lookup, 'test.Thing', bytes)).toEqual({
      metadata: { name: 'web', labels: { app: 'web', tier: 'front' }, creationTimestamp: '2023-11-14T22:13:20Z', renewTime: '2023-11-14T22:13:20.123456Z' },
      replicas: 0,
      paused: true,
      data: { key: 'AAH/' },
      ports: [80, 443, 8080],
      cpu: '500m',
      port: 8080,
      target: 'http',
      timeout: '1m30.5s',
      extension: { kind: 'Widget', size: 3 },
      children: [{ replicas: 2 }],
      ratio: 0.25,
      offset: -7,
    });
  });

  it('names the field path of bad input, and refuses unknown message types and runaway nesting', () => {
    const badString = nested((w) =>
      w.tag(1, W.LENGTH_DELIMITED).message(nested((m) => m.tag(1, W.LENGTH_DELIMITED).bytesField(Uint8Array.from([0xff])))),
    ).finish();
    expect(() => decodeMessage(lookup, 'test.Thing', badString)).toThrow('a string field is not valid UTF-8 (at metadata.name)');
    const wrongWire = nested((w) => w.tag(2, W.LENGTH_DELIMITED).string('x')).finish();
    expect(() => decodeMessage(lookup, 'test.Thing', wrongWire)).toThrow('wire type 2 does not fit a int32 field (at replicas)');
    expect(() => decodeMessage(lookup, 'test.Nope', new Uint8Array(0))).toThrow('no protobuf definition for test.Nope');
    let deep = new WireWriter();
    for (let i = 0; i < 150; i++) deep = new WireWriter().tag(11, W.LENGTH_DELIMITED).message(deep);
    expect(() => decodeMessage(lookup, 'test.Thing', deep.finish())).toThrow('nests more than 100 levels deep');
  });

  it("formats durations as Go's time.Duration does", () => {
    expect([0, 1, 1500, 2_000_000, 1_500_000_000, 60_000_000_000, 3_723_000_000_000, -5_000_000_000].map(goDuration)).toEqual([
      '0s',
      '1ns',
      '1.5µs',
      '2ms',
      '1.5s',
      '1m0s',
      '1h2m3s',
      '-5s',
    ]);
  });
});

describe('encoding JSON objects as protobuf', () => {
  it('round-trips through decodeMessage, writing fields in number order and map keys sorted', () => {
    const object = {
      metadata: { name: 'web', labels: { tier: 'front', app: 'web' }, creationTimestamp: '2023-11-14T22:13:20Z', renewTime: '2023-11-14T22:13:20.123456Z' },
      replicas: 0,
      paused: false,
      data: { key: 'AAH/' },
      ports: [80, 443],
      cpu: '500m',
      port: 8080,
      target: 'http',
      timeout: '1m30.5s',
      extension: { kind: 'Widget' },
      children: [{ replicas: 2, offset: -3 }],
      ratio: 0.25,
      offset: -(2 ** 40),
    };
    const bytes = encodeMessage(lookup, 'test.Thing', object);
    expect(decodeMessage(lookup, 'test.Thing', bytes)).toEqual({ ...object, metadata: { ...object.metadata, labels: { app: 'web', tier: 'front' } } });
    expect(bytes[0]).toBe(0x0a); // field 1 (metadata) first
  });

  it('names the path of a value of the wrong type', () => {
    expect(() => encodeMessage(lookup, 'test.Thing', { replicas: 'three' })).toThrow('expected an integer, got "three" (at replicas)');
    expect(() => encodeMessage(lookup, 'test.Thing', { metadata: { labels: ['x'] } })).toThrow('expected an object (at metadata.labels)');
    expect(() => encodeMessage(lookup, 'test.Thing', { timeout: 'soon' })).toThrow('expected a duration like "1m30s", got "soon" (at timeout)');
  });
});
