// Metadata-only answers (client-go's metadata client, which kube-controller-manager's garbage collector and
// quota controller watch every resource with): `Accept: application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;
// g=meta.k8s.io;v=v1, application/json;as=…` asks for each object as a PartialObjectMetadata (a list as a
// PartialObjectMetadataList), whatever its kind, in JSON or protobuf.
import { errors, type KubeObject, type ListMeta } from '@skiff/api';
import { encodeProtobufObject, PROTOBUF_MEDIA_TYPE } from '@skiff/api/protobuf';
import type { ApiResponse } from '@skiff/kernel';
import { json } from './respond.js';

export interface MetadataFormat {
  apiVersion: 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1';
  kind: 'PartialObjectMetadata' | 'PartialObjectMetadataList';
  protobuf: boolean;
}

const PLAIN_TYPES = new Set(['application/json', 'application/yaml', PROTOBUF_MEDIA_TYPE, 'application/*', '*/*']);

/**
 * The metadata-only form an Accept header asks for, if its first media type the server can produce is one:
 * a JSON or protobuf type with `as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1|v1beta1`.
 */
export function metadataFormatOf(accept: string | undefined): MetadataFormat | undefined {
  if (!accept?.includes('as=PartialObjectMetadata')) return undefined;
  for (const entry of accept.split(',')) {
    const [type = '', ...params] = entry.split(';').map((part) => part.trim());
    const values = new Map(params.map((param) => param.split('=', 2).map((part) => part.trim()) as [string, string]));
    const as = values.get('as');
    if (as === undefined) {
      if (PLAIN_TYPES.has(type)) return undefined;
      continue;
    }
    if (as !== 'PartialObjectMetadata' && as !== 'PartialObjectMetadataList') {
      if (as === 'Table') return undefined;
      continue;
    }
    const version = values.get('v');
    const json = type === 'application/json' || type === '*/*' || type === 'application/*';
    if (values.get('g') !== 'meta.k8s.io' || (version !== 'v1' && version !== 'v1beta1') || (!json && type !== PROTOBUF_MEDIA_TYPE)) continue;
    return { apiVersion: `meta.k8s.io/${version}`, kind: as, protobuf: type === PROTOBUF_MEDIA_TYPE };
  }
  return undefined;
}

/** One object's metadata as a PartialObjectMetadata of the format's version. */
export function partialObjectMetadata(object: KubeObject, format: Pick<MetadataFormat, 'apiVersion'>): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: format.apiVersion, metadata: object.metadata };
}

/** 406 unless the format names what the request answers: one object, or a list. */
export function requireMetadataKind(format: MetadataFormat, list: boolean): void {
  if (list && format.kind !== 'PartialObjectMetadataList')
    throw errors.notAcceptable('you requested PartialObjectMetadata, but the requested object is a list');
  if (!list && format.kind !== 'PartialObjectMetadata')
    throw errors.notAcceptable('you requested PartialObjectMetadataList, but the requested object is not a list');
}

export function partialObjectMetadataList(items: KubeObject[], metadata: ListMeta, format: MetadataFormat): KubeObject {
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: format.apiVersion,
    metadata,
    items: items.map((item) => partialObjectMetadata(item, format)),
  } as KubeObject;
}

/** A metadata-only answer in the format's encoding. */
export function metadataResponse(object: KubeObject, format: MetadataFormat): ApiResponse {
  if (!format.protobuf) return json(object);
  return { status: 200, headers: { 'content-type': PROTOBUF_MEDIA_TYPE }, body: Buffer.from(encodeProtobufObject(object)) };
}
