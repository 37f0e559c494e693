import type { Duplex } from 'node:stream';
import { dialUpgrade } from './backend.js';
import { headerList } from './headers.js';
import { backendError, refusalError, writeRawStatus } from './raw-response.js';
import { splice } from './splice.js';

export const SPDY_UPGRADE = 'SPDY/3.1';
export const STREAM_PROTOCOL_HEADER = 'X-Stream-Protocol-Version';

/**
 * SPDY from the client (kubectl before 1.30, and every kubectl's fallback): the runtime's streaming server
 * speaks SPDY too, so the API server only carries bytes. It sends the upgrade to the streaming URL with the
 * client's protocol versions, relays the runtime's 101 (which names the version chosen) and then splices the
 * two connections. Nothing of the SPDY session is read.
 */
export function spdyPassThrough(streamUrl: string, clientHeaders: Record<string, string | undefined>): (socket: Duplex, head: Buffer) => void {
  const protocols = headerList(clientHeaders['x-stream-protocol-version']);
  return (client, head) => {
    const closed = new AbortController();
    client.once('close', () => closed.abort());
    void (async () => {
      let answer;
      try {
        answer = await dialUpgrade(
          streamUrl,
          { method: 'POST', upgrade: SPDY_UPGRADE, headers: protocols.map((protocol): [string, string] => [STREAM_PROTOCOL_HEADER, protocol]) },
          closed.signal,
        );
      } catch (err) {
        writeRawStatus(client, backendError(err));
        return;
      }
      if (!answer.upgraded) return writeRawStatus(client, refusalError(answer));
      const backend = answer.socket;
      if (client.destroyed) return backend.destroy();
      client.write(answer.rawHead);
      if (answer.rest.length) client.write(answer.rest);
      if (head.length) backend.write(head);
      splice(client, backend);
    })();
  };
}
