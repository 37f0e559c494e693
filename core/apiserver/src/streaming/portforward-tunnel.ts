import type { Duplex } from 'node:stream';
import { endSoon } from '@skiff/client';
import type { StreamTarget } from './backend.js';
import { throughRuntime } from './runtime-upgrade.js';
import { pauseUntilDrained } from './backpressure.js';
import { CLOSE_CODE, handshakeResponse, WebSocketConnection } from './websocket.js';

/** kubectl 1.31+ offers `SPDY/3.1+portforward.k8s.io`: SPDY carried in WebSocket binary messages. */
const TUNNEL_PREFIX = 'SPDY/3.1+';

/** The SPDY protocols a client offers to tunnel (`SPDY/3.1+portforward.k8s.io` → `portforward.k8s.io`). */
export function tunneledProtocols(offered: string[]): string[] {
  return offered
    .filter((protocol) => protocol.startsWith(TUNNEL_PREFIX) && protocol.endsWith('.k8s.io'))
    .map((protocol) => protocol.slice(TUNNEL_PREFIX.length));
}

/**
 * Port-forward over WebSocket: the client runs its SPDY session inside binary messages. The API server
 * upgrades to SPDY at the runtime's streaming URL first (as kube-apiserver does, so a refusal reaches the
 * client as an HTTP error it can fall back from), then accepts the WebSocket and carries bytes: each
 * message's payload to the runtime, each chunk from the runtime as one message. No SPDY is parsed.
 */
export function portForwardTunnel(target: StreamTarget, key: string, protocols: string[]): (socket: Duplex, head: Buffer) => void {
  return throughRuntime(target, protocols, (client, head, runtime) => {
    const backend = runtime.socket;
    const chosen = runtime.headers['x-stream-protocol-version']?.trim();
    client.write(handshakeResponse(key, chosen ? `${TUNNEL_PREFIX}${chosen}` : undefined));
    const ws = new WebSocketConnection(client, {
      message(data, binary) {
        if (!binary) return ws.close(CLOSE_CODE.UNSUPPORTED_DATA, 'the tunnel carries binary messages only');
        if (!backend.write(data)) pauseUntilDrained(client, backend);
      },
      close: () => endSoon(backend),
    });
    backend.on('data', (chunk: Buffer) => {
      if (!ws.send(chunk)) pauseUntilDrained(backend, client);
    });
    backend.once('close', () => ws.close(CLOSE_CODE.NORMAL));
    if (runtime.rest.length) ws.send(runtime.rest);
    ws.receiveHead(head);
    backend.resume();
  });
}
