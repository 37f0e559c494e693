import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { ApiResponse } from '@skiff/kernel';

const JSON_TYPE = 'application/json';

/**
 * Writes an ApiResponse straight to the socket: JSON bodies serialised once, buffers and strings as they
 * are, headers exactly as the pipeline set them (kubectl compares the aggregated-discovery Content-Type).
 * Watch and log streams go out with the headers flushed at once (kubectl wait and rollout status hang
 * otherwise), one JSON object per line for watches.
 */
export async function sendResponse(reply: FastifyReply, response: ApiResponse): Promise<void> {
  if (response.stream) return streamLines(reply, response, response.stream, (event) => `${JSON.stringify(event)}\n`);
  if (response.textStream) return streamLines(reply, response, response.textStream, (chunk) => chunk);
  reply.hijack();
  const body = response.body;
  const payload = body === undefined ? '' : Buffer.isBuffer(body) || typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string | number> = { ...{}, ...response.headers, 'content-length': Buffer.byteLength(payload) };
  if (body !== undefined && !headers['content-type']) headers['content-type'] = JSON_TYPE;
  reply.raw.writeHead(response.status, headers);
  reply.raw.end(payload);
}

async function streamLines<T>(reply: FastifyReply, response: ApiResponse, stream: AsyncIterable<T>, line: (item: T) => string | Uint8Array): Promise<void> {
  reply.hijack();
  const raw: ServerResponse = reply.raw;
  raw.writeHead(response.status, { 'cache-control': 'no-cache, private', ...response.headers });
  raw.flushHeaders();
  try {
    for await (const item of stream) {
      if (raw.destroyed) break;
      if (!raw.write(line(item))) await drainedOrClosed(raw);
    }
  } finally {
    if (!raw.destroyed) raw.end();
  }
}

/** Waits for the socket to drain or close, and removes both listeners whichever comes first. */
async function drainedOrClosed(raw: ServerResponse): Promise<void> {
  const done = new AbortController();
  try {
    await Promise.race([once(raw, 'drain', { signal: done.signal }), once(raw, 'close', { signal: done.signal })]);
  } finally {
    done.abort();
  }
}
