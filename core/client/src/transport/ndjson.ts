import { StringDecoder } from 'node:string_decoder';
import { errorMessage } from '@skiff/api';
import type { WatchEvent } from '@skiff/kernel';
import { ClientError } from '../errors.js';

/**
 * Splits a chunked watch response into events: one JSON object per line. Chunks arrive at arbitrary
 * byte boundaries (mid-line, mid-UTF-8 character), so bytes are decoded and buffered until a newline.
 */
export async function* watchEventsFromLines(chunks: AsyncIterable<Buffer | string>, path: string): AsyncGenerator<WatchEvent> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of chunks) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line) yield decodeEvent(line, path);
      newline = pending.indexOf('\n');
    }
  }
  const last = (pending + decoder.end()).trim();
  if (last) yield decodeEvent(last, path);
}

function decodeEvent(line: string, path: string): WatchEvent {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch (err) {
    throw new ClientError('SKIFF_ERR_CLIENT_WATCH_DECODE', { path, detail: errorMessage(err) }, { cause: err });
  }
  if (!isWatchEvent(event)) throw new ClientError('SKIFF_ERR_CLIENT_WATCH_DECODE', { path, detail: `not a watch event: ${line.slice(0, 200)}` });
  return event;
}

/** A watch event as far as a client can tell from its frame: an object with a type (the server vouches for the rest). */
function isWatchEvent(value: unknown): value is WatchEvent {
  return typeof value === 'object' && value !== null && 'type' in value && typeof value.type === 'string';
}
