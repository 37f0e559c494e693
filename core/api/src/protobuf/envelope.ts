import { WIRE_TYPE, WireError, WireReader, WireWriter } from './wire.js';

/** The media type of Kubernetes' protobuf encoding. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** Every protobuf body Kubernetes sends starts with these four bytes: "k8s" and a zero. */
export const PROTOBUF_MAGIC = Uint8Array.from([0x6b, 0x38, 0x73, 0x00]);

/**
 * What the envelope (runtime.Unknown) says about the object it carries: its apiVersion and kind
 * (TypeMeta, field 1: apiVersion 1, kind 2), the object's own bytes (field 2), and how they are
 * encoded (fields 3 and 4; both empty for a plain protobuf object).
 */
export interface ProtobufEnvelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

/** Reads the magic and the envelope; throws a WireError naming what is wrong. */
export function decodeEnvelope(body: Uint8Array): ProtobufEnvelope {
  if (body.length < PROTOBUF_MAGIC.length || PROTOBUF_MAGIC.some((byte, i) => body[i] !== byte))
    throw new WireError('the body does not start with the protobuf magic "k8s\\0"');
  const envelope: ProtobufEnvelope = { apiVersion: '', kind: '', raw: new Uint8Array(0), contentEncoding: '', contentType: '' };
  const reader = new WireReader(body, PROTOBUF_MAGIC.length);
  while (!reader.done) {
    const { field, wireType } = reader.tag();
    if (wireType !== WIRE_TYPE.LENGTH_DELIMITED) {
      reader.skip(wireType);
      continue;
    }
    if (field === 1) {
      const typeMeta = reader.bytesField();
      const inner = new WireReader(typeMeta);
      while (!inner.done) {
        const tag = inner.tag();
        if (tag.field === 1 && tag.wireType === WIRE_TYPE.LENGTH_DELIMITED) envelope.apiVersion = inner.string();
        else if (tag.field === 2 && tag.wireType === WIRE_TYPE.LENGTH_DELIMITED) envelope.kind = inner.string();
        else inner.skip(tag.wireType);
      }
    } else if (field === 2) envelope.raw = reader.bytesField();
    else if (field === 3) envelope.contentEncoding = reader.string();
    else if (field === 4) envelope.contentType = reader.string();
    else reader.skip(wireType);
  }
  return envelope;
}

/** The magic and an envelope around an encoded object, as Kubernetes writes them. */
export function encodeEnvelope(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array {
  const typeMeta = new WireWriter().tag(1, WIRE_TYPE.LENGTH_DELIMITED).string(apiVersion).tag(2, WIRE_TYPE.LENGTH_DELIMITED).string(kind);
  const envelope = new WireWriter()
    .tag(1, WIRE_TYPE.LENGTH_DELIMITED)
    .message(typeMeta)
    .tag(2, WIRE_TYPE.LENGTH_DELIMITED)
    .bytesField(raw)
    .tag(3, WIRE_TYPE.LENGTH_DELIMITED)
    .string('')
    .tag(4, WIRE_TYPE.LENGTH_DELIMITED)
    .string('')
    .finish();
  const out = new Uint8Array(PROTOBUF_MAGIC.length + envelope.length);
  out.set(PROTOBUF_MAGIC);
  out.set(envelope, PROTOBUF_MAGIC.length);
  return out;
}
