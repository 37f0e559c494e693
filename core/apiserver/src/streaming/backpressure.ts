import type { Duplex } from 'node:stream';

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
