import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';
import { SPDY3_DICTIONARY } from './dictionary.js';

/**
 * SPDY/3 compresses every header block of a session with one zlib stream per direction, seeded with the
 * SPDY/3 dictionary, each block ending at a Z_SYNC_FLUSH. Node's zlib streams are asynchronous, so blocks
 * are processed one at a time, in the order they were handed in: the peer's stream depends on that order.
 */
class ZlibSession {
  private queue: Promise<unknown> = Promise.resolve();
  private failure: Error | undefined;

  constructor(private readonly engine: Deflate | Inflate) {
    engine.on('error', (err: Error) => {
      this.failure ??= err;
    });
  }

  process(input: Buffer): Promise<Buffer> {
    const run = () => this.run(input);
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  close(): void {
    this.engine.destroy();
  }

  private run(input: Buffer): Promise<Buffer> {
    if (this.failure) return Promise.reject(this.failure);
    const engine = this.engine;
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      // Read in paused mode: the transform holds its write callback (and so the flush's) while its readable
      // buffer is full, so output is drained as it comes as well as once the flush is done.
      const drain = () => {
        for (let chunk: unknown = engine.read(); Buffer.isBuffer(chunk); chunk = engine.read()) chunks.push(chunk);
      };
      const fail = (err: Error) => {
        cleanup();
        reject(err);
      };
      const cleanup = () => {
        engine.off('readable', drain);
        engine.off('error', fail);
      };
      engine.on('readable', drain);
      engine.once('error', fail);
      engine.write(input);
      engine.flush(constants.Z_SYNC_FLUSH, () => {
        drain();
        cleanup();
        if (this.failure) reject(this.failure);
        else resolve(Buffer.concat(chunks));
      });
    });
  }
}

/** Compresses the header blocks this side sends. */
export class HeaderCompressor {
  private readonly session = new ZlibSession(createDeflate({ dictionary: SPDY3_DICTIONARY }));

  compress(block: Buffer): Promise<Buffer> {
    return this.session.process(block);
  }

  close(): void {
    this.session.close();
  }
}

/** Decompresses the header blocks the peer sends. */
export class HeaderDecompressor {
  private readonly session = new ZlibSession(createInflate({ dictionary: SPDY3_DICTIONARY }));

  decompress(block: Buffer): Promise<Buffer> {
    return this.session.process(block);
  }

  close(): void {
    this.session.close();
  }
}
