import type { Duplex } from 'node:stream';
import { dialUpgrade, SPDY_UPGRADE, STREAM_PROTOCOL_HEADER, type StreamTarget, type Upgraded } from './backend.js';
import { backendError, refusalError, writeRawStatus } from './raw-response.js';

/**
 * Takes a client's connection over by first upgrading to SPDY at the streaming URL (the runtime's, or a remote kubelet's), offering
 * `protocols` (X-Stream-Protocol-Version, one line each), as kube-apiserver does: a runtime that cannot be
 * reached or refuses is answered to the client as a Status before anything is upgraded (so kubectl can fall
 * back), a client gone meanwhile drops the runtime's connection, and `connected` gets both sides otherwise.
 */
export function throughRuntime(
  target: StreamTarget,
  protocols: string[],
  connected: (client: Duplex, head: Buffer, runtime: Upgraded) => void,
): (socket: Duplex, head: Buffer) => void {
  return (client, head) => {
    const closed = new AbortController();
    client.once('close', () => closed.abort());
    void (async () => {
      let answer;
      try {
        answer = await dialUpgrade(
          target.url,
          {
            method: 'POST',
            upgrade: SPDY_UPGRADE,
            headers: protocols.map((protocol): [string, string] => [STREAM_PROTOCOL_HEADER, protocol]),
            tls: target.tls,
          },
          closed.signal,
        );
      } catch (err) {
        writeRawStatus(client, backendError(err));
        return;
      }
      if (!answer.upgraded) return writeRawStatus(client, refusalError(answer));
      if (client.destroyed) return answer.socket.destroy();
      connected(client, head, answer);
    })();
  };
}
