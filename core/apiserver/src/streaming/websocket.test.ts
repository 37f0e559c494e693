import { Duplex, PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CLOSE_CODE,
  acceptKey,
  encodeFrame,
  FrameParser,
  handshakeProblem,
  isValidCloseCode,
  OPCODE,
  WebSocketConnection,
  type WebSocketProtocolError,
} from './websocket.js';

const MASK = Buffer.from([0x37, 0xfa, 0x21, 0x3d]);

/** Frames written by the server, unmasked; the test reads them with a parser that expects no mask. */
function serverFrames(bytes: Buffer): { fin: boolean; opcode: number; payload: Buffer }[] {
  const frames = [];
  let offset = 0;
  while (offset < bytes.length) {
    const fin = (bytes[offset]! & 0x80) !== 0;
    const opcode = bytes[offset]! & 0x0f;
    let length = bytes[offset + 1]! & 0x7f;
    let start = offset + 2;
    if (length === 126) {
      length = bytes.readUInt16BE(offset + 2);
      start = offset + 4;
    } else if (length === 127) {
      length = Number(bytes.readBigUInt64BE(offset + 2));
      start = offset + 10;
    }
    frames.push({ fin, opcode, payload: bytes.subarray(start, start + length) });
    offset = start + length;
  }
  return frames;
}

/** A socket pair's server end, with everything the server wrote collected. */
function fakeSocket() {
  const written: Buffer[] = [];
  let ended = false;
  const socket = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      written.push(chunk);
      callback();
    },
    final(callback) {
      ended = true;
      callback();
    },
  });
  return { socket, written: () => Buffer.concat(written), ended: () => ended, fromClient: (bytes: Buffer) => socket.push(bytes) };
}

describe('the WebSocket handshake', () => {
  it('computes Sec-WebSocket-Accept as RFC 6455 section 1.3 shows', () => {
    expect(acceptKey('dGhlIHNhbXBsZSBub25jZQ==')).toBe('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
  });

  it('refuses requests that are no version-13 WebSocket handshake', () => {
    const ok = { upgrade: 'websocket', connection: 'Upgrade', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' };
    expect(handshakeProblem(ok)).toBeUndefined();
    expect(handshakeProblem({ ...ok, connection: 'keep-alive' })).toMatch(/not a websocket/);
    expect(handshakeProblem({ ...ok, 'sec-websocket-version': '8' })).toMatch(/version/);
    expect(handshakeProblem({ ...ok, 'sec-websocket-key': 'short' })).toMatch(/Key/);
  });
});

describe('WebSocket frames', () => {
  it('round-trip masked client frames of every length form', () => {
    for (const size of [0, 5, 125, 126, 65535, 65536, 200_000]) {
      const payload = Buffer.alloc(size, 7);
      const frames = new FrameParser().push(encodeFrame(OPCODE.BINARY, payload, { mask: MASK }));
      expect(frames).toHaveLength(1);
      expect(frames[0]).toMatchObject({ fin: true, opcode: OPCODE.BINARY });
      expect(frames[0]!.payload.equals(payload)).toBe(true);
    }
  });

  it('reassembles frames split across chunks, byte by byte', () => {
    const bytes = Buffer.concat([
      encodeFrame(OPCODE.TEXT, Buffer.from('hello'), { mask: MASK }),
      encodeFrame(OPCODE.BINARY, Buffer.alloc(300, 1), { mask: MASK }),
    ]);
    const parser = new FrameParser();
    const frames = [];
    for (const byte of bytes) frames.push(...parser.push(Buffer.from([byte])));
    expect(frames.map((f) => [f.opcode, f.payload.length])).toEqual([
      [OPCODE.TEXT, 5],
      [OPCODE.BINARY, 300],
    ]);
  });

  it('refuses unmasked frames, reserved bits, unknown opcodes and long control frames', () => {
    const refuse = (bytes: Buffer) => {
      try {
        new FrameParser().push(bytes);
      } catch (err) {
        return (err as WebSocketProtocolError).closeCode;
      }
      return undefined;
    };
    expect(refuse(encodeFrame(OPCODE.BINARY, Buffer.from('x')))).toBe(CLOSE_CODE.PROTOCOL_ERROR);
    const reserved = encodeFrame(OPCODE.BINARY, Buffer.from('x'), { mask: MASK });
    reserved[0]! |= 0x40;
    expect(refuse(reserved)).toBe(CLOSE_CODE.PROTOCOL_ERROR);
    expect(refuse(encodeFrame(0x3, Buffer.from('x'), { mask: MASK }))).toBe(CLOSE_CODE.PROTOCOL_ERROR);
    expect(refuse(encodeFrame(OPCODE.PING, Buffer.alloc(126), { mask: MASK }))).toBe(CLOSE_CODE.PROTOCOL_ERROR);
    expect(refuse(encodeFrame(OPCODE.BINARY, Buffer.alloc(100), { mask: MASK }).subarray(0, 10))).toBeUndefined();
    expect(new FrameParser(10).push.bind(new FrameParser(10), encodeFrame(OPCODE.BINARY, Buffer.alloc(11), { mask: MASK }))).toThrow(/too large/);
  });
});

describe('a WebSocket connection', () => {
  it('joins fragments, answers pings between them, and sends unmasked binary frames', () => {
    const { socket, written, fromClient } = fakeSocket();
    const messages: [string, boolean][] = [];
    const ws = new WebSocketConnection(socket, { message: (data, binary) => messages.push([data.toString(), binary]), close: () => undefined });
    fromClient(
      Buffer.concat([
        encodeFrame(OPCODE.TEXT, Buffer.from('hel'), { fin: false, mask: MASK }),
        encodeFrame(OPCODE.PING, Buffer.from('beat'), { mask: MASK }),
        encodeFrame(OPCODE.CONTINUATION, Buffer.from('lo'), { mask: MASK }),
      ]),
    );
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        expect(messages).toEqual([['hello', false]]);
        ws.send(Buffer.from([1, 0x41]));
        expect(serverFrames(written())).toEqual([
          { fin: true, opcode: OPCODE.PONG, payload: Buffer.from('beat') },
          { fin: true, opcode: OPCODE.BINARY, payload: Buffer.from([1, 0x41]) },
        ]);
        resolve();
      }),
    );
  });

  it('answers a close frame with the same code, ends the socket and reports the code once', async () => {
    const { socket, written, ended, fromClient } = fakeSocket();
    const closes: number[] = [];
    new WebSocketConnection(socket, { message: () => undefined, close: (code) => closes.push(code) });
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(CLOSE_CODE.GOING_AWAY);
    fromClient(encodeFrame(OPCODE.CLOSE, payload, { mask: MASK }));
    await new Promise((resolve) => setImmediate(resolve));
    socket.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    expect(closes).toEqual([CLOSE_CODE.GOING_AWAY]);
    expect(ended()).toBe(true);
    expect(serverFrames(written())).toEqual([{ fin: true, opcode: OPCODE.CLOSE, payload }]);
  });

  it('closes with 1002 on a protocol violation and 1007 on text that is not UTF-8', async () => {
    for (const [bytes, code] of [
      [encodeFrame(OPCODE.BINARY, Buffer.from('unmasked')), CLOSE_CODE.PROTOCOL_ERROR],
      [encodeFrame(OPCODE.TEXT, Buffer.from([0xff, 0xfe]), { mask: MASK }), CLOSE_CODE.INVALID_PAYLOAD],
      [encodeFrame(OPCODE.CONTINUATION, Buffer.from('x'), { mask: MASK }), CLOSE_CODE.PROTOCOL_ERROR],
    ] as const) {
      const { socket, written, fromClient } = fakeSocket();
      const closes: number[] = [];
      new WebSocketConnection(socket, { message: () => undefined, close: (c) => closes.push(c) });
      fromClient(bytes);
      await new Promise((resolve) => setImmediate(resolve));
      expect(closes).toEqual([code]);
      expect(serverFrames(written())[0]!.payload.readUInt16BE(0)).toBe(code);
    }
  });

  it('reports 1006 when the socket ends without a close frame', async () => {
    const socket = new PassThrough();
    const closes: number[] = [];
    new WebSocketConnection(socket, { message: () => undefined, close: (c) => closes.push(c) });
    socket.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    expect(closes).toEqual([CLOSE_CODE.ABNORMAL]);
  });

  it('refuses close codes that may not be sent (RFC 6455 section 7.4) with 1002 and reasons that are not UTF-8 with 1007', async () => {
    const closeFrame = (code: number, reason: Buffer = Buffer.alloc(0)) => {
      const payload = Buffer.alloc(2 + reason.length);
      payload.writeUInt16BE(code);
      reason.copy(payload, 2);
      return encodeFrame(OPCODE.CLOSE, payload, { mask: MASK });
    };
    for (const [bytes, code] of [
      [closeFrame(0), CLOSE_CODE.PROTOCOL_ERROR],
      [closeFrame(999), CLOSE_CODE.PROTOCOL_ERROR],
      [closeFrame(1004), CLOSE_CODE.PROTOCOL_ERROR],
      [closeFrame(1005), CLOSE_CODE.PROTOCOL_ERROR],
      [closeFrame(1006), CLOSE_CODE.PROTOCOL_ERROR],
      [closeFrame(1015), CLOSE_CODE.PROTOCOL_ERROR],
      [closeFrame(2000), CLOSE_CODE.PROTOCOL_ERROR],
      [closeFrame(5000), CLOSE_CODE.PROTOCOL_ERROR],
      [closeFrame(CLOSE_CODE.NORMAL, Buffer.from([0x62, 0x79, 0xff])), CLOSE_CODE.INVALID_PAYLOAD],
    ] as const) {
      const { socket, written, ended, fromClient } = fakeSocket();
      const closes: number[] = [];
      new WebSocketConnection(socket, { message: () => undefined, close: (c) => closes.push(c) });
      fromClient(bytes);
      await new Promise((resolve) => setImmediate(resolve));
      expect(closes).toEqual([code]);
      const frames = serverFrames(written());
      expect(frames).toHaveLength(1);
      expect(frames[0]!.opcode).toBe(OPCODE.CLOSE);
      expect(frames[0]!.payload.readUInt16BE(0)).toBe(code);
      expect(ended()).toBe(true);
    }
  });

  it('accepts the close codes a peer may send, a UTF-8 reason, and a close frame without a code', async () => {
    expect([1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4999].every(isValidCloseCode)).toBe(true);
    const reason = Buffer.from('bye — für jetzt', 'utf8');
    const payload = Buffer.concat([Buffer.from([0x0f, 0xa0]), reason]); // 4000
    const { socket, written, fromClient } = fakeSocket();
    const closes: [number, string][] = [];
    new WebSocketConnection(socket, { message: () => undefined, close: (c, r) => closes.push([c, r]) });
    fromClient(encodeFrame(OPCODE.CLOSE, payload, { mask: MASK }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closes).toEqual([[4000, 'bye — für jetzt']]);
    expect(serverFrames(written())).toEqual([{ fin: true, opcode: OPCODE.CLOSE, payload: payload.subarray(0, 2) }]);

    const empty = fakeSocket();
    const codes: number[] = [];
    new WebSocketConnection(empty.socket, { message: () => undefined, close: (c) => codes.push(c) });
    empty.fromClient(encodeFrame(OPCODE.CLOSE, Buffer.alloc(0), { mask: MASK }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(codes).toEqual([CLOSE_CODE.NO_STATUS]);
    expect(serverFrames(empty.written())).toEqual([{ fin: true, opcode: OPCODE.CLOSE, payload: Buffer.alloc(0) }]);
  });

  it('keeps a close reason within a control frame, cut at a character boundary', async () => {
    const { socket, written } = fakeSocket();
    const ws = new WebSocketConnection(socket, { message: () => undefined, close: () => undefined });
    ws.close(CLOSE_CODE.INTERNAL_ERROR, 'ü'.repeat(100));
    const [frame] = serverFrames(written());
    expect(frame!.payload.length).toBeLessThanOrEqual(125);
    expect(frame!.payload.subarray(2).toString('utf8')).toBe('ü'.repeat(61));
    socket.destroy();
  });

  describe('a peer that never closes its side of the TCP connection', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    const closeFrame = () => encodeFrame(OPCODE.CLOSE, Buffer.from([0x03, 0xe8]), { mask: MASK });
    for (const [what, bytes, start] of [
      ['after answering its close frame', closeFrame, undefined],
      ['after a protocol error', () => encodeFrame(OPCODE.BINARY, Buffer.from('unmasked')), undefined],
      ['after our close frame was answered', closeFrame, (ws: WebSocketConnection) => ws.close()],
    ] as const) {
      it(`has its socket destroyed ${what}`, async () => {
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
        const { socket, ended, fromClient } = fakeSocket();
        const closes: number[] = [];
        const ws = new WebSocketConnection(socket, { message: () => undefined, close: (c) => closes.push(c) });
        start?.(ws);
        fromClient(bytes());
        await new Promise((resolve) => setImmediate(resolve));
        expect(ended()).toBe(true);
        expect(closes).toHaveLength(1);
        vi.advanceTimersByTime(4_999);
        expect(socket.destroyed).toBe(false);
        vi.advanceTimersByTime(1);
        expect(socket.destroyed).toBe(true);
        await new Promise((resolve) => setImmediate(resolve));
        expect(closes).toHaveLength(1);
      });
    }

    it('has its close timer cleared when the socket closes', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const { socket } = fakeSocket();
      const ws = new WebSocketConnection(socket, { message: () => undefined, close: () => undefined });
      ws.close();
      expect(vi.getTimerCount()).toBe(1);
      socket.destroy();
      await new Promise((resolve) => setImmediate(resolve));
      expect(vi.getTimerCount()).toBe(0);
    });
  });
});
