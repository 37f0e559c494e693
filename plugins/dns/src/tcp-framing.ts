/**
 * Splits a TCP stream into DNS messages (RFC 1035 4.2.2: each behind a two-byte length). Chunks are kept as
 * they come and joined only when a message spans several.
 */
export class TcpFramer {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly maxMessage: number) {}

  /** Adds a chunk; false when more is buffered than one largest message could need (the peer misbehaves). */
  push(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    return this.buffered <= this.maxMessage + 2 || this.complete();
  }

  private complete(): boolean {
    const head = this.head();
    return head !== undefined && head.length >= 2 && head.readUInt16BE(0) + 2 <= this.buffered;
  }

  private head(): Buffer | undefined {
    if (this.chunks.length > 1 && this.chunks[0]!.length < 2) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0];
  }

  /** The next whole message, or undefined until more arrives. */
  next(): Buffer | undefined {
    if (this.buffered < 2) return undefined;
    const head = this.head()!;
    const length = head.readUInt16BE(0);
    if (this.buffered < length + 2) return undefined;
    if (head.length < length + 2) this.chunks = [Buffer.concat(this.chunks)];
    const first = this.chunks[0]!;
    const message = first.subarray(2, length + 2);
    const rest = first.subarray(length + 2);
    if (rest.length) this.chunks[0] = rest;
    else this.chunks.shift();
    this.buffered -= length + 2;
    return message;
  }
}
