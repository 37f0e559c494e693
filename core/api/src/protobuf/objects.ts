import { messageFacts, packageOfGroupVersion } from '../generated/facts.js';
import type { KubeObject, Status } from '../types.js';
import { decodeMessage, type MessageLookup } from './decode.js';
import { encodeMessage } from './encode.js';
import { decodeEnvelope, encodeEnvelope, PROTOBUF_MEDIA_TYPE } from './envelope.js';
import { WIRE_TYPE, WireError, WireWriter } from './wire.js';

const lookup: MessageLookup = messageFacts;

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
/** Kinds every group version carries that live in meta/v1 (a Status in a watch ERROR event, say). */
const META_KINDS = new Set(['Status', 'WatchEvent', 'DeleteOptions', 'ListOptions', 'Table', 'PartialObjectMetadata', 'PartialObjectMetadataList']);

/** The proto message of a built-in kind: `apps/v1` `Deployment` → `k8s.io.api.apps.v1.Deployment`. */
export function protobufMessageOf(apiVersion: string, kind: string): string | undefined {
  if (META_KINDS.has(kind) && messageFacts(`${META}.${kind}`)) return `${META}.${kind}`;
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const pkg = packageOfGroupVersion(group, version);
  const name = pkg && `${pkg.name}.${kind}`;
  return name && messageFacts(name) ? name : undefined;
}

/**
 * A protobuf request body (`application/vnd.kubernetes.protobuf`) as the object it carries, in its JSON
 * form with apiVersion and kind from the envelope. Throws a WireError saying what could not be read.
 */
export function decodeProtobufObject(body: Uint8Array): KubeObject {
  const envelope = decodeEnvelope(body);
  if (envelope.contentEncoding) throw new WireError(`content encoding "${envelope.contentEncoding}" is not supported`);
  if (envelope.contentType && envelope.contentType !== PROTOBUF_MEDIA_TYPE)
    throw new WireError(`the envelope's content type "${envelope.contentType}" is not protobuf`);
  const message = protobufMessageOf(envelope.apiVersion, envelope.kind);
  if (!message) throw new WireError(`no protobuf definition for ${envelope.kind} in ${envelope.apiVersion || 'no group version'}`);
  return { apiVersion: envelope.apiVersion, kind: envelope.kind, ...decodeMessage(lookup, message, envelope.raw) } as KubeObject;
}

/** An object of a built-in kind (or a Status) as a protobuf body, envelope included. */
export function encodeProtobufObject(object: KubeObject | Status): Uint8Array {
  const message = object.apiVersion && object.kind ? protobufMessageOf(object.apiVersion, object.kind) : undefined;
  if (!message) throw new WireError(`no protobuf definition for ${object.kind} in ${object.apiVersion}`);
  const { apiVersion, kind, ...fields } = object;
  return encodeEnvelope(apiVersion!, kind!, encodeMessage(lookup, message, fields));
}

/**
 * One item of a list of `listKind` as the list carries it on the wire: the item's message without an
 * envelope. With encodeProtobufList a server keeps each item's bytes and answers many lists from them.
 */
export function encodeProtobufListItem(apiVersion: string, listKind: string, item: KubeObject): Uint8Array {
  const { apiVersion: _itemApiVersion, kind: _itemKind, ...fields } = item;
  return encodeMessage(lookup, listFieldsOf(apiVersion, listKind).items.type, fields);
}

/** A list as a protobuf body, envelope included, from its metadata and its items' bytes (encodeProtobufListItem). */
export function encodeProtobufList(list: { apiVersion: string; kind: string; metadata?: object }, items: readonly Uint8Array[]): Uint8Array {
  const { metadata, items: itemsField } = listFieldsOf(list.apiVersion, list.kind);
  const writer = new WireWriter(items.reduce((sum, item) => sum + item.length + 6, 64));
  if (list.metadata) writer.tag(metadata.number, WIRE_TYPE.LENGTH_DELIMITED).bytesField(encodeMessage(lookup, metadata.type, { ...list.metadata }));
  for (const item of items) writer.tag(itemsField.number, WIRE_TYPE.LENGTH_DELIMITED).bytesField(item);
  return encodeEnvelope(list.apiVersion, list.kind, writer.finish());
}

function listFieldsOf(apiVersion: string, listKind: string): Record<'metadata' | 'items', { number: number; type: string }> {
  const message = protobufMessageOf(apiVersion, listKind);
  const fields = message ? lookup(message)?.fields : undefined;
  const metadata = fields?.find((field) => field.name === 'metadata');
  const items = fields?.find((field) => field.name === 'items' && field.repeated);
  if (!metadata || !items) throw new WireError(`no protobuf definition for ${listKind} in ${apiVersion}`);
  return { metadata, items };
}

/**
 * One event of a protobuf watch stream (`application/vnd.kubernetes.protobuf;stream=watch`): a 4-byte
 * big-endian length, then the WatchEvent's own bytes, with no magic and no envelope (client-go reads
 * watch frames with the raw protobuf serializer, which unmarshals each frame straight into a
 * metav1.WatchEvent); only the event's `object` holds an enveloped object, as a GET would answer it.
 */
export function encodeProtobufWatchEvent(type: string, object: KubeObject | Status): Uint8Array {
  const raw = new WireWriter().tag(1, WIRE_TYPE.LENGTH_DELIMITED).bytesField(encodeProtobufObject(object));
  const event = new WireWriter().tag(1, WIRE_TYPE.LENGTH_DELIMITED).string(type).tag(2, WIRE_TYPE.LENGTH_DELIMITED).message(raw).finish();
  const out = new Uint8Array(4 + event.length);
  new DataView(out.buffer).setUint32(0, event.length);
  out.set(event, 4);
  return out;
}
