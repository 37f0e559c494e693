import { describe, expect, it } from 'vitest';
import { decodeEnvelope, encodeEnvelope, PROTOBUF_MAGIC } from './envelope.js';

describe('the protobuf envelope', () => {
  it('round-trips apiVersion, kind and the raw object bytes', () => {
    const raw = Uint8Array.from([0x0a, 0x03, 0x61, 0x62, 0x63]);
    const body = encodeEnvelope('apps/v1', 'Deployment', raw);
    expect(Array.from(body.subarray(0, 4))).toEqual(Array.from(PROTOBUF_MAGIC));
    const envelope = decodeEnvelope(body);
    expect(envelope).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', contentEncoding: '', contentType: '' });
    expect(Array.from(envelope.raw)).toEqual(Array.from(raw));
  });

  it('decodes a hand-assembled envelope byte for byte (k8s\\0, TypeMeta{v1, Namespace}, raw)', () => {
    // 0a 0f: field 1, 15 bytes: 0a 02 "v1" 12 09 "Namespace"; 12 02: field 2, 2 bytes: 0a 00
    const body = Uint8Array.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x09, ...Buffer.from('Namespace'), 0x12, 0x02, 0x0a, 0x00]);
    const envelope = decodeEnvelope(body);
    expect(envelope.apiVersion).toBe('v1');
    expect(envelope.kind).toBe('Namespace');
    expect(Array.from(envelope.raw)).toEqual([0x0a, 0x00]);
  });

  it('refuses a body without the magic, or one cut short', () => {
    expect(() => decodeEnvelope(Buffer.from('{"kind":"Pod"}'))).toThrow('does not start with the protobuf magic');
    const body = encodeEnvelope('v1', 'Pod', Uint8Array.from([1, 2, 3]));
    expect(() => decodeEnvelope(body.subarray(0, body.length - 8))).toThrow();
  });
});
