import { describe, expect, it } from 'vitest';
import { ByteQueue } from './byte-queue.js';
import { dataFrame, FrameReader } from './spdy/frames.js';
import { encodeFrame, FrameParser, OPCODE } from './websocket.js';

describe('ByteQueue', () => {
  it('peeks and takes across chunk boundaries', () => {
    const queue = new ByteQueue();
    for (const part of ['ab', 'cde', '', 'f', 'ghij']) queue.push(Buffer.from(part));
    expect(queue.length).toBe(10);
    expect(queue.peek(4).toString()).toBe('abcd');
    expect(queue.take(1).toString()).toBe('a');
    expect(queue.take(5).toString()).toBe('bcdef');
    expect(queue.peek(20).toString()).toBe('ghij');
    expect(queue.take(4).toString()).toBe('ghij');
    expect(queue.length).toBe(0);
  });

  it('lets the parsers take a large frame that arrives in small chunks in linear time', () => {
    const payload = Buffer.alloc(8 * 1024 * 1024, 3);
    const mask = Buffer.from([1, 2, 3, 4]);
    for (const [bytes, parse] of [
      [encodeFrame(OPCODE.BINARY, payload, { mask }), (parser: FrameParser | FrameReader, chunk: Buffer) => parser.push(chunk)],
      [dataFrame(1, 0, payload), (parser: FrameParser | FrameReader, chunk: Buffer) => parser.push(chunk)],
    ] as const) {
      const parser = bytes[0] === 0 ? new FrameReader() : new FrameParser();
      const started = performance.now();
      let frames = 0;
      for (let i = 0; i < bytes.length; i += 1024) frames += parse(parser, bytes.subarray(i, i + 1024)).length;
      expect(frames).toBe(1);
      expect(performance.now() - started).toBeLessThan(2000);
    }
  });
});
