import { createServer, type AddressInfo } from 'node:net';
import { Duplex } from 'node:stream';
import { waitFor } from '@skiff/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialUpgrade, type Upgraded } from '../backend.js';
import { receivedText, startTestRuntime, type TestRuntime } from '../../test-support/test-runtime.js';
import {
  controlFrame,
  dataFrame,
  decodeHeaderBlock,
  encodeHeaderBlock,
  FLAG_FIN,
  FRAME_TYPE,
  FrameReader,
  GOAWAY_STATUS,
  parsePing,
  parseStreamValue,
  parseSynStream,
  pingPayload,
  RST_STATUS,
  streamHeadersPayload,
  streamValuePayload,
  synStreamPayload,
  type Frame,
} from './frames.js';
import { HeaderCompressor, HeaderDecompressor } from './header-compression.js';
import { SpdySession, type StreamEnd } from './session.js';

let runtime: TestRuntime;
beforeAll(async () => {
  runtime = await startTestRuntime();
});
afterAll(async () => {
  await runtime?.close();
});

const V4 = [['X-Stream-Protocol-Version', 'v4.channel.k8s.io']] as [string, string][];

describe('a SPDY session against a streaming server', () => {
  it('opens the remotecommand streams, relays both ways and reads the outcome the runtime writes before it resets everything', async () => {
    runtime.expect('exec', 'upper', ['error', 'stdin', 'stdout', 'stderr'], async (streams, session) => {
      await session.ended('stdin');
      streams.get('stdout')!.write(Buffer.from(receivedText(streams.get('stdin')).toUpperCase()));
      streams.get('stderr')!.write(Buffer.from('careful'));
      return 3;
    });
    const answer = (await dialUpgrade(runtime.url('exec', 'upper'), { method: 'POST', upgrade: 'SPDY/3.1', headers: V4 })) as Upgraded;
    expect(answer.upgraded).toBe(true);
    expect(answer.headers['x-stream-protocol-version']).toBe('v4.channel.k8s.io');
    const session = new SpdySession(answer.socket, answer.rest);
    const out: Record<string, string> = { error: '', stdout: '', stderr: '' };
    const ends: Record<string, StreamEnd> = {};
    const collect = (type: string) => ({ data: (chunk: Buffer) => (out[type] += chunk.toString()), end: (how: StreamEnd) => (ends[type] = how) });
    await session.openStream({ streamtype: 'error' }, collect('error'));
    const stdin = await session.openStream({ streamtype: 'stdin' });
    await session.openStream({ streamtype: 'stdout' }, collect('stdout'));
    await session.openStream({ streamtype: 'stderr' }, collect('stderr'));
    stdin.write(Buffer.from('hello '));
    stdin.write(Buffer.from('world'));
    stdin.end();
    await session.closed;
    expect(out.stdout).toBe('HELLO WORLD');
    expect(out.stderr).toBe('careful');
    expect(JSON.parse(out.error!)).toMatchObject({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] } });
    expect(ends).toEqual({ error: 'reset', stdout: 'reset', stderr: 'reset' });
    expect(runtime.requests.at(-1)).toMatchObject({ method: 'POST', url: '/exec/upper' });
  });

  it('reports a refusal with the runtime status and text, and an unreachable runtime as an error', async () => {
    expect(await dialUpgrade(runtime.url('exec', 'unknown'), { method: 'POST', upgrade: 'SPDY/3.1', headers: V4 })).toEqual({
      upgraded: false,
      status: 404,
      message: 'invalid or expired token',
    });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(dialUpgrade(`http://127.0.0.1:${port}/exec/x`, { method: 'POST', upgrade: 'SPDY/3.1', headers: V4 })).rejects.toThrow(/ECONNREFUSED/);
    await expect(dialUpgrade('ftp://127.0.0.1/x', { method: 'POST', upgrade: 'SPDY/3.1', headers: V4 })).rejects.toThrow(/scheme/);
  });
});

/** The peer's end of a session, driven by the test: frames the session wrote, and a way to send it frames. */
function peer() {
  const reader = new FrameReader();
  const frames: Frame[] = [];
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      frames.push(...reader.push(chunk));
      callback();
    },
  });
  const compressor = new HeaderCompressor();
  const decompressor = new HeaderDecompressor();
  return {
    socket,
    frames,
    control: (type: number) => frames.filter((f) => f.control && f.type === type),
    send: (bytes: Buffer) => socket.push(bytes),
    reply: async (streamId: number, flags = 0) =>
      socket.push(controlFrame(FRAME_TYPE.SYN_REPLY, flags, streamHeadersPayload(streamId, await compressor.compress(encodeHeaderBlock({}))))),
    push: async (streamId: number, headers: Record<string, string>) =>
      socket.push(controlFrame(FRAME_TYPE.SYN_STREAM, 0, synStreamPayload(streamId, await compressor.compress(encodeHeaderBlock(headers))))),
    /** The index-th SYN_STREAM the session wrote, once it has written it (header compression is asynchronous). */
    syn: (index: number) => waitFor(`SYN_STREAM #${index}`, () => frames.filter((f) => f.control && f.type === FRAME_TYPE.SYN_STREAM)[index]),
    headersOf: async (frame: Frame) => decodeHeaderBlock(await decompressor.decompress(parseSynStream(frame.payload).headerBlock)),
    close() {
      compressor.close();
      decompressor.close();
    },
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('a SPDY session', () => {
  it('numbers its streams 1, 3, 5 and sends their headers compressed, waiting for each reply', async () => {
    const remote = peer();
    const session = new SpdySession(remote.socket);
    const first = session.openStream({ streamtype: 'error' });
    const syn = await remote.syn(0);
    expect(parseSynStream(syn.payload).streamId).toBe(1);
    expect(await remote.headersOf(syn)).toEqual({ streamtype: ['error'] });
    await remote.reply(1);
    expect((await first).id).toBe(1);
    const second = session.openStream({ streamtype: 'stdout' });
    await remote.headersOf(await remote.syn(1));
    await remote.reply(3);
    expect((await second).id).toBe(3);
    remote.close();
  });

  it('echoes the peer’s pings, not replies to its own, and acknowledges received data with WINDOW_UPDATEs', async () => {
    const remote = peer();
    const session = new SpdySession(remote.socket);
    const received: Buffer[] = [];
    const opened = session.openStream({ streamtype: 'stdout' }, { data: (chunk) => received.push(chunk) });
    await remote.headersOf(await remote.syn(0));
    await remote.reply(1);
    await opened;
    remote.send(controlFrame(FRAME_TYPE.PING, 0, pingPayload(2)));
    remote.send(controlFrame(FRAME_TYPE.PING, 0, pingPayload(1)));
    remote.send(dataFrame(1, 0, Buffer.alloc(40_000, 1)));
    await waitFor('the data and both WINDOW_UPDATEs', () => received.length > 0 && remote.control(FRAME_TYPE.WINDOW_UPDATE).length >= 2);
    await tick();
    expect(remote.control(FRAME_TYPE.PING).map((f) => parsePing((f as { payload: Buffer }).payload))).toEqual([2]);
    expect(Buffer.concat(received).length).toBe(40_000);
    expect(remote.control(FRAME_TYPE.WINDOW_UPDATE).map((f) => parseStreamValue((f as { payload: Buffer }).payload))).toEqual([
      { streamId: 1, value: 40_000 },
      { streamId: 0, value: 40_000 },
    ]);
    remote.close();
  });

  it('ends a stream on FIN and on RST_STREAM, refuses streams the peer opens, and stops opening after GOAWAY', async () => {
    const remote = peer();
    const session = new SpdySession(remote.socket);
    const ends: StreamEnd[] = [];
    const a = session.openStream({ streamtype: 'a' }, { end: (how) => ends.push(how) });
    await remote.headersOf(await remote.syn(0));
    await remote.reply(1);
    const stream = await a;
    remote.send(dataFrame(1, FLAG_FIN, Buffer.alloc(0)));
    const b = session.openStream({ streamtype: 'b' }, { end: (how) => ends.push(how) });
    await remote.headersOf(await remote.syn(1));
    remote.send(controlFrame(FRAME_TYPE.RST_STREAM, 0, streamValuePayload(3, RST_STATUS.REFUSED_STREAM)));
    await expect(b).rejects.toThrow(/reset SPDY stream 3/);
    expect(ends).toEqual(['fin', 'reset']);

    stream.end();
    const fin = await waitFor('the FIN on stream 1', () => remote.frames.find((f) => !f.control && f.streamId === 1));
    expect(fin).toMatchObject({ flags: FLAG_FIN, payload: Buffer.alloc(0) });

    await remote.push(2, { streamtype: 'pushed' });
    remote.send(controlFrame(FRAME_TYPE.GOAWAY, 0, streamValuePayload(0, GOAWAY_STATUS.OK)));
    await waitFor('the refusal of stream 2', () => remote.control(FRAME_TYPE.RST_STREAM).length > 0);
    expect(remote.control(FRAME_TYPE.RST_STREAM).map((f) => parseStreamValue((f as { payload: Buffer }).payload))).toContainEqual({
      streamId: 2,
      value: RST_STATUS.REFUSED_STREAM,
    });
    await expect(session.openStream({ streamtype: 'c' })).rejects.toThrow(/closing/);
    remote.close();
  });

  it('tells every stream when the connection closes, after handling the frames that came before', async () => {
    const remote = peer();
    const session = new SpdySession(remote.socket);
    const events: string[] = [];
    const opened = session.openStream({ streamtype: 'error' }, { data: (c) => events.push(c.toString()), end: (how) => events.push(how) });
    await remote.headersOf(await remote.syn(0));
    await remote.reply(1);
    await opened;
    remote.send(dataFrame(1, 0, Buffer.from('{"status":"Success"}')));
    remote.socket.destroy();
    await session.closed;
    expect(events).toEqual(['{"status":"Success"}', 'closed']);
    remote.close();
  });
});
