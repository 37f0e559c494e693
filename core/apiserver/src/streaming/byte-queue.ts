/**
 * Bytes received and not yet parsed, kept as the chunks they came in: a frame spread over many chunks is
 * joined once, when it is complete, instead of the buffer being copied again with every chunk.
 */
export class ByteQueue {
  private chunks: Buffer[] = [];
  length = 0;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** The first `count` bytes (fewer when fewer are queued), left in the queue. */
  peek(count: number): Buffer {
    return this.join(count).subarray(0, count);
  }

  /** Removes and returns the first `count` bytes; the caller checked that `length` has them. */
  take(count: number): Buffer {
    const first = this.join(count);
    const taken = first.subarray(0, count);
    if (first.length > count) this.chunks[0] = first.subarray(count);
    else this.chunks.shift();
    this.length -= count;
    return taken;
  }

  /** Joins the leading chunks until the first holds at least `atLeast` bytes (or all there are). */
  private join(atLeast: number): Buffer {
    let first = this.chunks[0] ?? Buffer.alloc(0);
    if (first.length >= atLeast || this.chunks.length < 2) return first;
    let count = 0;
    let bytes = 0;
    while (count < this.chunks.length && bytes < atLeast) bytes += this.chunks[count++]!.length;
    first = Buffer.concat(this.chunks.slice(0, count), bytes);
    this.chunks.splice(0, count, first);
    return first;
  }
}
