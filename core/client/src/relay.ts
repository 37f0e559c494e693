// Byte plumbing shared by the API server and the kubelet, which both relay upgraded connections (exec, attach,
// port-forward) and read what a backend answered.
import type { Duplex, Readable, Writable } from 'node:stream';

/** How long one side may take to finish once the other has closed, before it is cut off. */
const LINGER_MS = 10_000;

/** Ends a socket gracefully (what was written still goes out), and destroys it if it lingers. */
export function endSoon(socket: Duplex): void {
  if (socket.destroyed) return;
  socket.end();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/** Relays bytes both ways between two connections; when one closes, the other is ended. */
export function splice(a: Duplex, b: Duplex): void {
  a.pipe(b);
  b.pipe(a);
  a.once('close', () => endSoon(b));
  b.once('close', () => endSoon(a));
}

/** Resolves when `stream` can take more writes, or has closed. */
export function drained(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.once('drain', done);
    stream.once('close', done);
  });
}

/**
 * The first `maxBytes` of a body (an answer that refuses or fails, read for its message), then the stream is
 * destroyed. A body that breaks off still gives what arrived.
 */
export async function readUpTo(body: Readable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= maxBytes) break;
    }
  } catch {
    // What arrived is the answer.
  }
  body.destroy();
  return Buffer.concat(chunks).subarray(0, maxBytes);
}
