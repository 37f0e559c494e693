import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { ApiResponse } from '@skiff/kernel';

const JSON_TYPE = 'application/json';

/**
 * Writes an ApiResponse: JSON bodies serialised once; buffers and strings as they are; watch and log
 * streams straight to the socket with the headers flushed at once (kubectl wait and rollout status hang
 * otherwise), one JSON object per line for watches.
 */
export async function sendResponse(reply: FastifyReply, response: ApiResponse): Promise<void> {
  if (response.stream) return streamLines(reply, response, response.stream, (event) => `${JSON.stringify(event)}\n`);
  if (response.textStream) return streamLines(reply, response, response.textStream, (chunk) => chunk);
  reply.code(response.status);
  if (response.headers) reply.headers(response.headers);
  const body = response.body;
  if (body === undefined) return void reply.send();
  if (Buffer.isBuffer(body) || typeof body === 'string') return void reply.send(body);
  if (!response.headers?.['content-type']) reply.type(JSON_TYPE);
  return void reply.send(JSON.stringify(body));
}

async function streamLines<T>(reply: FastifyReply, response: ApiResponse, stream: AsyncIterable<T>, line: (item: T) => string): Promise<void> {
  reply.hijack();
  const raw: ServerResponse = reply.raw;
  raw.writeHead(response.status, { 'cache-control': 'no-cache, private', ...response.headers });
  raw.flushHeaders();
  try {
    for await (const item of stream) {
      if (raw.destroyed) break;
      if (!raw.write(line(item))) await Promise.race([once(raw, 'drain'), once(raw, 'close')]);
    }
  } finally {
    if (!raw.destroyed) raw.end();
  }
}
