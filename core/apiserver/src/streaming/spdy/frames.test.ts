import { deflateSync, inflateSync, constants } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SPDY3_DICTIONARY } from './dictionary.js';
import {
  controlFrame,
  dataFrame,
  decodeHeaderBlock,
  encodeHeaderBlock,
  FLAG_FIN,
  FRAME_TYPE,
  FrameReader,
  parsePing,
  parseSettings,
  parseStreamHeaders,
  parseStreamValue,
  parseSynStream,
  pingPayload,
  settingsPayload,
  SpdyProtocolError,
  streamHeadersPayload,
  streamValuePayload,
  synStreamPayload,
} from './frames.js';
import { HeaderCompressor, HeaderDecompressor } from './header-compression.js';

describe('SPDY/3.1 frames', () => {
  it('lay out a control frame header as the draft does: control bit, version 3, type, flags, 24-bit length', () => {
    const frame = controlFrame(FRAME_TYPE.SYN_REPLY, FLAG_FIN, Buffer.from([1, 2, 3]));
    expect([...frame.subarray(0, 8)]).toEqual([0x80, 0x03, 0x00, 0x02, 0x01, 0x00, 0x00, 0x03]);
  });

  it('lay out a data frame: stream id without the control bit, flags, length', () => {
    const frame = dataFrame(5, FLAG_FIN, Buffer.from('hi'));
    expect([...frame]).toEqual([0, 0, 0, 5, 0x01, 0, 0, 2, 0x68, 0x69]);
  });

  it('round-trip through the reader, whatever the chunking', () => {
    const bytes = Buffer.concat([
      controlFrame(FRAME_TYPE.SYN_STREAM, 0, synStreamPayload(3, Buffer.from('block'), 2)),
      dataFrame(3, 0, Buffer.alloc(5_000, 9)),
      controlFrame(FRAME_TYPE.RST_STREAM, 0, streamValuePayload(3, 5)),
      controlFrame(FRAME_TYPE.PING, 0, pingPayload(2)),
      controlFrame(FRAME_TYPE.SETTINGS, 0, settingsPayload([{ id: 7, value: 65536, flags: 1 }])),
    ]);
    for (const chunkSize of [1, 7, 4096, bytes.length]) {
      const reader = new FrameReader();
      const frames = [];
      for (let i = 0; i < bytes.length; i += chunkSize) frames.push(...reader.push(bytes.subarray(i, i + chunkSize)));
      expect(frames).toHaveLength(5);
      const [syn, data, rst, ping, settings] = frames;
      expect(syn).toMatchObject({ control: true, version: 3, type: FRAME_TYPE.SYN_STREAM });
      expect(parseSynStream(syn!.payload)).toMatchObject({ streamId: 3, associatedTo: 0, priority: 2, headerBlock: Buffer.from('block') });
      expect(data).toMatchObject({ control: false, streamId: 3, flags: 0 });
      expect(data!.payload.length).toBe(5_000);
      expect(parseStreamValue(rst!.payload)).toEqual({ streamId: 3, value: 5 });
      expect(parsePing(ping!.payload)).toBe(2);
      expect(parseSettings(settings!.payload)).toEqual([{ id: 7, value: 65536, flags: 1 }]);
    }
    expect(parseStreamHeaders(streamHeadersPayload(7, Buffer.from('x')))).toEqual({ streamId: 7, headerBlock: Buffer.from('x') });
  });

  it('refuse a frame longer than the reader allows', () => {
    expect(() => new FrameReader(10).push(dataFrame(1, 0, Buffer.alloc(11)))).toThrow(SpdyProtocolError);
  });
});

describe('SPDY header blocks', () => {
  it('encode lower-case names with 32-bit lengths and NUL-joined values', () => {
    const block = encodeHeaderBlock({ streamType: 'error', 'X-Many': ['a', 'b'] });
    expect(block.readUInt32BE(0)).toBe(2);
    expect(decodeHeaderBlock(block)).toEqual({ streamtype: ['error'], 'x-many': ['a', 'b'] });
    expect(() => decodeHeaderBlock(block.subarray(0, block.length - 1))).toThrow(/truncated/);
  });

  it('use the SPDY/3 dictionary (1423 bytes: length-prefixed words, then common text)', () => {
    expect(SPDY3_DICTIONARY.length).toBe(1423);
    expect(SPDY3_DICTIONARY.subarray(0, 11).toString('latin1')).toBe('\0\0\0\x07options');
    expect(SPDY3_DICTIONARY.subarray(-9).toString('latin1')).toBe(',*,enq=0.');
  });

  it('compress as one zlib stream per direction, each block ending at a sync flush, round-tripping in order', async () => {
    const compressor = new HeaderCompressor();
    const decompressor = new HeaderDecompressor();
    const blocks = ([{ streamtype: 'error' }, { streamtype: 'stdin' }, { streamtype: 'stdout' }, {}] as Record<string, string>[]).map((headers) =>
      encodeHeaderBlock(headers),
    );
    const compressed = await Promise.all(blocks.map((block) => compressor.compress(block)));
    // Every block ends with the empty stored block of Z_SYNC_FLUSH; the first starts the zlib stream, naming the dictionary.
    for (const block of compressed) expect([...block.subarray(-4)]).toEqual([0x00, 0x00, 0xff, 0xff]);
    expect(compressed[0]![1]! & 0x20).toBe(0x20);
    for (const [i, block] of compressed.entries()) expect((await decompressor.decompress(block)).equals(blocks[i]!)).toBe(true);
    // Later blocks refer back to earlier ones: they only decode in the same session.
    expect(compressed[2]!.length).toBeLessThan(blocks[2]!.length);
    compressor.close();
    decompressor.close();
  });

  it('read blocks another zlib wrote with the dictionary', async () => {
    const block = encodeHeaderBlock({ streamtype: 'stdout', port: '8080' });
    const foreign = deflateSync(block, { dictionary: SPDY3_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH });
    const decompressor = new HeaderDecompressor();
    expect((await decompressor.decompress(foreign)).equals(block)).toBe(true);
    decompressor.close();
    const compressor = new HeaderCompressor();
    const ours = await compressor.compress(block);
    expect(inflateSync(ours, { dictionary: SPDY3_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH }).equals(block)).toBe(true);
    compressor.close();
  });

  it('fail a block that is not part of the stream', async () => {
    const decompressor = new HeaderDecompressor();
    await expect(decompressor.decompress(Buffer.from('not zlib at all'))).rejects.toThrow();
    decompressor.close();
  });
});
