import type { Duplex } from 'node:stream';
import { errors } from '@skiff/api';
import { drained } from '@skiff/client';
import type { ApiResponse, Logger } from '@skiff/kernel';
import { CLOSE_CODE, handshakeProblem, handshakeResponse, offeredProtocols, WebSocketConnection } from './websocket.js';

/** The subprotocols of a streamed read over WebSocket, as kube-apiserver offers them: raw bytes, or base64 text. */
const LOG_PROTOCOLS: Readonly<Record<string, { base64: boolean }>> = Object.freeze({
  '': { base64: false },
  'binary.k8s.io': { base64: false },
  'base64.binary.k8s.io': { base64: true },
});

/**
 * Checks a WebSocket read's handshake request and answers the subprotocol to speak: the client's first supported
 * offer (offering none is the plain one). 400 for a malformed handshake, 403 when no offer is supported.
 */
export function logProtocolOf(headers: Record<string, string | undefined>): string {
  const problem = handshakeProblem(headers);
  if (problem) throw errors.badRequest(`unable to upgrade: ${problem}`);
  const offered = offeredProtocols(headers);
  const protocol = (offered.length ? offered : ['']).find((candidate) => Object.hasOwn(LOG_PROTOCOLS, candidate));
  if (protocol === undefined) {
    throw errors.forbidden(`requested protocol(s) are not supported: [${offered.join(' ')}]; supports [${Object.keys(LOG_PROTOCOLS).join(' ')}]`);
  }
  return protocol;
}

/**
 * A log read over WebSocket (GET pods/<name>/log with `Upgrade: websocket`), as kube-apiserver serves streamed
 * reads: an empty message first, then every chunk of the log as one message (binary, or base64 text for
 * base64.binary.k8s.io), and a normal close when the log ends. Messages from the client are ignored; its
 * close ends the read (`stop`). `protocol` comes from logProtocolOf.
 */
export function logOverWebSocket(key: string, protocol: string, chunks: AsyncIterable<Uint8Array>, stop: () => void, logger: Logger): ApiResponse {
  const { base64 } = LOG_PROTOCOLS[protocol]!;
  return {
    status: 101,
    upgrade: (socket: Duplex, head: Buffer) => {
      socket.write(handshakeResponse(key, protocol || undefined));
      const ws = new WebSocketConnection(socket, { message: () => undefined, close: stop });
      ws.receiveHead(head);
      const send = (bytes: Uint8Array) => ws.send(base64 ? Buffer.from(Buffer.from(bytes).toString('base64')) : Buffer.from(bytes), !base64);
      void (async () => {
        try {
          send(new Uint8Array());
          for await (const chunk of chunks) {
            if (socket.destroyed) break;
            if (chunk.length && !send(chunk)) await drained(socket);
          }
          ws.close(CLOSE_CODE.NORMAL);
        } catch (err) {
          logger.warn({ err }, 'container log stream over WebSocket ended with an error');
          ws.close(CLOSE_CODE.INTERNAL_ERROR, 'the log stream failed');
        }
      })();
    },
  };
}
