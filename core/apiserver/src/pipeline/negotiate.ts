import { type KubeObject } from '@skiff/api';
import { encodeProtobufObject, PROTOBUF_MEDIA_TYPE, protobufMessageOf } from '@skiff/api/protobuf';
import type { ApiRequest, ApiResponse } from '@skiff/kernel';

/** Whether the client lists protobuf first in Accept (client-go's protobuf clients: `protobuf, json`). */
export function prefersProtobuf(accept: string | undefined): boolean {
  if (!accept) return false;
  const first = accept.split(',')[0]!.trim();
  const [type, ...parameters] = first.split(';').map((part) => part.trim());
  return type === PROTOBUF_MEDIA_TYPE && !parameters.some((parameter) => parameter.startsWith('as='));
}

/**
 * Answers in protobuf when the client asks for it first and the body is an object of a kind the facts
 * table knows; anything else (Status errors, tables, discovery) stays JSON, which protobuf clients also
 * accept, as kube-apiserver does for types without a protobuf form.
 */
export function negotiateProtobuf(request: ApiRequest, response: ApiResponse): ApiResponse {
  const body = response.body as KubeObject | undefined;
  if (response.stream || response.textStream || !body || typeof body !== 'object' || Buffer.isBuffer(body)) return response;
  if (!prefersProtobuf(request.headers.accept) || !body.apiVersion || !body.kind || body.kind === 'Status' || !protobufMessageOf(body.apiVersion, body.kind))
    return response;
  return { ...{}, ...response, headers: { ...{}, ...response.headers, 'content-type': PROTOBUF_MEDIA_TYPE }, body: Buffer.from(encodeProtobufObject(body)) };
}
