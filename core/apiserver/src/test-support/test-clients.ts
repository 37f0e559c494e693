// Clients for tests of the upgrade paths: what kubectl does on the wire, without kubectl. A WebSocket client
// (masked frames, as RFC 6455 requires of clients), a SPDY client over an upgraded connection, and a raw
// upgrade request that shows exactly what came back on the socket.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { SpdySession } from '../streaming/spdy/session.js';
import { encodeFrame, OPCODE } from '../streaming/websocket.js';

export interface UpgradeTarget {
  url: string;
  caPem: string;
}

export type UpgradeOutcome =
  | { upgraded: true; response: IncomingMessage; socket: Socket; head: Buffer }
  | { upgraded: false; status: number; body: any; text: string };

/** Sends an upgrade request; resolves with the upgraded socket, or with the non-101 answer. */
export function upgradeRequest(target: UpgradeTarget, method: string, path: string, headers: Record<string, string | string[]>): Promise<UpgradeOutcome> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${target.url}${path}`, { method, ca: target.caPem, headers: { connection: 'Upgrade', ...headers } });
    req.on('upgrade', (response: IncomingMessage, socket: Socket, head: Buffer) => resolve({ upgraded: true, response, socket, head }));
    req.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ upgraded: false, status: response.statusCode ?? 0, body, text });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The first chunk of a streamed answer (a followed log); then the client goes away. */
export function firstChunk(target: UpgradeTarget, path: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${target.url}${path}`, { ca: target.caPem, headers }, (res) => {
      res.once('data', (chunk: Buffer) => {
        resolve(chunk.toString());
        req.destroy();
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends a request by hand and returns every byte the server wrote until it closed the connection. */
export function rawExchange(target: UpgradeTarget, request: string): Promise<string> {
  const url = new URL(target.url);
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: target.caPem, servername: 'localhost' }, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

export function webSocketHeaders(protocols: string[], token?: string): Record<string, string> {
  return {
    upgrade: 'websocket',
    'sec-websocket-version': '13',
    'sec-websocket-key': randomBytes(16).toString('base64'),
    'sec-websocket-protocol': protocols.join(', '),
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
}

export interface TestWebSocket {
  /** Whole messages from the server, in order; `close` is the close frame's code, once one came. */
  messages: { data: Buffer; binary: boolean }[];
  closeCode: number | undefined;
  send(data: Buffer, binary?: boolean): void;
  close(code?: number): void;
  /** Resolves when the server closed the connection. */
  ended: Promise<void>;
  socket: Socket;
}

/** A WebSocket client over an upgraded socket: masks what it sends and answers the server's close; tests drive the rest. */
export function webSocketClient(socket: Socket, head: Buffer): TestWebSocket {
  const client: TestWebSocket = {
    messages: [],
    closeCode: undefined,
    send: (data, binary = true) => socket.write(encodeFrame(binary ? OPCODE.BINARY : OPCODE.TEXT, data, { mask: randomBytes(4) })),
    close: (code = 1000) => {
      const payload = Buffer.alloc(2);
      payload.writeUInt16BE(code);
      socket.write(encodeFrame(OPCODE.CLOSE, payload, { mask: randomBytes(4) }));
    },
    ended: new Promise((resolve) => socket.once('close', () => resolve())),
    socket,
  };
  let buffered = head;
  const fragments: Buffer[] = [];
  let fragmentedOpcode = 0;
  const parse = () => {
    for (;;) {
      if (buffered.length < 2) return;
      const fin = (buffered[0]! & 0x80) !== 0;
      const opcode = buffered[0]! & 0x0f;
      let length = buffered[1]! & 0x7f;
      let start = 2;
      if (length === 126) {
        if (buffered.length < 4) return;
        length = buffered.readUInt16BE(2);
        start = 4;
      } else if (length === 127) {
        if (buffered.length < 10) return;
        length = Number(buffered.readBigUInt64BE(2));
        start = 10;
      }
      if (buffered.length < start + length) return;
      const payload = buffered.subarray(start, start + length);
      buffered = buffered.subarray(start + length);
      if (opcode === OPCODE.CLOSE) {
        // Answer as gorilla/websocket (kubectl) does: the same code back.
        client.closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        socket.write(encodeFrame(OPCODE.CLOSE, payload.subarray(0, 2), { mask: randomBytes(4) }));
        continue;
      }
      if (opcode >= OPCODE.CLOSE) continue;
      if (opcode !== OPCODE.CONTINUATION) fragmentedOpcode = opcode;
      fragments.push(payload);
      if (fin) {
        client.messages.push({ data: Buffer.concat(fragments.splice(0)), binary: fragmentedOpcode === OPCODE.BINARY });
      }
    }
  };
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    parse();
  });
  parse();
  return client;
}

/** The bytes of a SPDY session carried in WebSocket binary messages (port-forward's tunnel), as a duplex. */
export function tunnelledSocket(ws: TestWebSocket): Duplex {
  let delivered = 0;
  const duplex = new Duplex({
    allowHalfOpen: false,
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      ws.send(chunk);
      callback();
    },
  });
  // Registered after the client's own listener: the messages of each chunk are parsed by the time this runs.
  const deliver = () => {
    while (delivered < ws.messages.length) duplex.push(ws.messages[delivered++]!.data);
  };
  ws.socket.on('data', deliver);
  setImmediate(deliver);
  ws.socket.once('close', () => duplex.push(null));
  return duplex;
}

/** A SPDY session on a socket the server upgraded. */
export function spdySession(socket: Socket, head: Buffer): SpdySession {
  return new SpdySession(socket, head);
}

/** Forwards port 80 once over a port-forward session (request 0): sends `ping`, answers what came back before the data stream ended. */
export function forwardPing(session: SpdySession): Promise<string> {
  let answer = '';
  return new Promise((resolve) => {
    void (async () => {
      await session.openStream({ streamtype: 'error', port: '80', requestid: '0' });
      const data = await session.openStream(
        { streamtype: 'data', port: '80', requestid: '0' },
        { data: (chunk) => (answer += chunk.toString()), end: () => resolve(answer) },
      );
      data.write(Buffer.from('ping'));
      data.end();
    })();
  });
}

/** Waits until `check` holds (polling), or fails after `timeoutMs`. */
export async function eventually(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
