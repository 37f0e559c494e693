import type { Duplex } from 'node:stream';

/** How long one side may take to finish once the other has closed, before it is cut off. */
const LINGER_MS = 10_000;

/** Pauses `reader` until `writer` drains: backpressure across a relay. */
export function pauseUntilDrained(reader: Duplex, writer: Duplex): void {
  if (reader.isPaused()) return;
  reader.pause();
  const resume = () => {
    writer.off('drain', resume);
    writer.off('close', resume);
    reader.resume();
  };
  writer.once('drain', resume);
  writer.once('close', resume);
}

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
