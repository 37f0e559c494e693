import type { Duplex } from 'node:stream';
import { splice } from '@skiff/client';
import type { StreamTarget } from './backend.js';
import { headerList } from './headers.js';
import { throughRuntime } from './runtime-upgrade.js';

/**
 * SPDY from the client (kubectl before 1.30, and every kubectl's fallback): the runtime's streaming server
 * speaks SPDY too, so the API server only carries bytes. It sends the upgrade to the streaming URL with the
 * client's protocol versions, relays the runtime's 101 (which names the version chosen) and then splices the
 * two connections. Nothing of the SPDY session is read.
 */
export function spdyPassThrough(target: StreamTarget, clientHeaders: Record<string, string | undefined>): (socket: Duplex, head: Buffer) => void {
  const protocols = headerList(clientHeaders['x-stream-protocol-version']);
  return throughRuntime(target, protocols, (client, head, runtime) => {
    const backend = runtime.socket;
    client.write(runtime.rawHead);
    if (runtime.rest.length) client.write(runtime.rest);
    if (head.length) backend.write(head);
    splice(client, backend);
  });
}
