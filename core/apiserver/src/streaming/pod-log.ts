import { errors, type StatusCause } from '@skiff/api';
import { fieldErrors } from '@skiff/api/validation';
import type { ApiResponse, ContainerLogOptions, Logger } from '@skiff/kernel';
import type { RestContext } from '../rest/context.js';
import { chooseContainer, nodeConnectionOf, nodeFailure, podRef, readPod, type NodeConnectionLookup } from './pod-target.js';
import { logOverWebSocket, logProtocolOf } from './log-websocket.js';
import { optionBool, optionInt } from './query-options.js';
import { isWebSocketRequest } from './websocket.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * GET pods/<name>/log: the container's output from its node's kubelet, as text/plain, streamed while
 * `follow` keeps it open; over WebSocket when the request asks to upgrade. Options and their checks are
 * kube-apiserver's PodLogOptions: malformed values are a 400 naming the parameter, values out of range a 422
 * Invalid PodLogOptions.
 */
export async function podLog(ctx: RestContext, nodes: NodeConnectionLookup): Promise<ApiResponse> {
  const { query } = ctx.request;
  const options = logOptions(query, ctx.info.name);
  const pod = await readPod(ctx);
  const container = chooseContainer(pod, query.container);
  const connection = await nodeConnectionOf(ctx, pod, nodes);
  const websocket = isWebSocketRequest(ctx.request.headers);
  // Over WebSocket the read also ends when the client closes (the socket may stay open a while after that).
  const stopped = new AbortController();
  const signal = websocket ? AbortSignal.any([stopped.signal, ...(ctx.request.signal ? [ctx.request.signal] : [])]) : (ctx.request.signal ?? stopped.signal);
  const protocol = websocket ? logProtocolOf(ctx.request.headers) : undefined;
  let chunks: AsyncIterable<Uint8Array>;
  try {
    chunks = await connection.containerLogs(podRef(pod), container, options, signal);
  } catch (err) {
    throw nodeFailure(err);
  }
  if (protocol !== undefined) return logOverWebSocket(ctx.request.headers['sec-websocket-key']!, protocol, chunks, () => stopped.abort(), ctx.core.logger);
  return { status: 200, headers: { 'content-type': 'text/plain' }, textStream: endQuietly(chunks, ctx.core.logger, `${pod.metadata.name}/${container}`) };
}

/** Parses and checks PodLogOptions from the query. */
export function logOptions(query: Record<string, string | undefined>, podName: string): ContainerLogOptions {
  const options: ContainerLogOptions = {
    follow: optionBool(query.follow),
    previous: optionBool(query.previous),
    timestamps: optionBool(query.timestamps),
  };
  const tailLines = optionInt(query, 'tailLines');
  const sinceSeconds = optionInt(query, 'sinceSeconds');
  const limitBytes = optionInt(query, 'limitBytes');
  const sinceTime = query.sinceTime || undefined;
  if (sinceTime !== undefined && (!RFC3339.test(sinceTime) || Number.isNaN(Date.parse(sinceTime)))) {
    throw errors.badRequest(`invalid value for query parameter sinceTime: ${JSON.stringify(sinceTime)} (expected an RFC 3339 time)`);
  }
  const causes: StatusCause[] = [];
  if (tailLines !== undefined && tailLines < 0) causes.push(fieldErrors.invalid('tailLines', tailLines, 'must be greater than or equal to 0'));
  if (limitBytes !== undefined && limitBytes < 1) causes.push(fieldErrors.invalid('limitBytes', limitBytes, 'must be greater than 0'));
  if (sinceSeconds !== undefined && sinceTime !== undefined)
    causes.push(fieldErrors.forbidden('', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  else if (sinceSeconds !== undefined && sinceSeconds < 1) causes.push(fieldErrors.invalid('sinceSeconds', sinceSeconds, 'must be greater than 0'));
  if (causes.length) throw errors.invalid('PodLogOptions', '', podName, causes);
  if (tailLines !== undefined) options.tailLines = tailLines;
  if (sinceSeconds !== undefined) options.sinceSeconds = sinceSeconds;
  if (sinceTime !== undefined) options.sinceTime = sinceTime;
  if (limitBytes !== undefined) options.limitBytes = limitBytes;
  return options;
}

/** A log stream that breaks off (the node went away) ends the response instead of failing it: the headers are out. */
async function* endQuietly(chunks: AsyncIterable<Uint8Array>, logger: Logger, what: string): AsyncIterable<Uint8Array> {
  try {
    yield* chunks;
  } catch (err) {
    logger.warn({ err, container: what }, 'container log stream ended with an error');
  }
}
