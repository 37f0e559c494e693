import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { errorMessage } from '@skiff/api';
import { readUpTo, splice } from '@skiff/client';
import { answerRaw } from './answers.js';

/** How long the runtime's streaming server may take to answer the upgrade. */
const DIAL_TIMEOUT_MS = 10_000;
/** The most of a refusal's body relayed. */
const MAX_REFUSAL_BYTES = 64 * 1024;

/** The request headers the runtime's streaming server reads: the protocol negotiation (SPDY or WebSocket). */
const FORWARDED_HEADERS = ['x-stream-protocol-version', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-protocol', 'sec-websocket-extensions'];

/**
 * Joins an upgrade request to the runtime's streaming URL, as upstream's kubelet proxies exec, attach and
 * port-forward: the same method and upgrade with the protocol headers (nothing else: the client's credentials
 * stay here) go to the runtime; its 101 is relayed to the client, then bytes flow both ways untouched. A
 * refusal is relayed as the runtime answered it; a runtime that cannot be reached is a 500.
 */
export function proxyUpgrade(client: Duplex, head: Buffer, request: IncomingMessage, streamUrl: string): void {
  const url = new URL(streamUrl);
  const headers: OutgoingHttpHeaders = { connection: 'Upgrade', upgrade: request.headers.upgrade ?? '', 'content-length': '0' };
  for (const name of FORWARDED_HEADERS) {
    const values = request.headersDistinct[name];
    if (values?.length) headers[name] = values.length === 1 ? values[0] : values;
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const backend = send(url, { method: request.method, headers, agent: false });
  const timer = setTimeout(() => backend.destroy(new Error(`no answer from the container runtime within ${DIAL_TIMEOUT_MS / 1000}s`)), DIAL_TIMEOUT_MS);
  const clientGone = () => backend.destroy();
  client.once('close', clientGone);
  const settled = () => {
    clearTimeout(timer);
    client.off('close', clientGone);
  };
  backend.once('upgrade', (response: IncomingMessage, runtime: Duplex, runtimeHead: Buffer) => {
    settled();
    runtime.on('error', () => runtime.destroy());
    if (client.destroyed) return runtime.destroy();
    client.write(responseHead(response));
    if (runtimeHead.length) client.write(runtimeHead);
    if (head.length) runtime.write(head);
    splice(client, runtime);
  });
  backend.once('response', (response: IncomingMessage) => {
    settled();
    void relayRefusal(client, response);
  });
  backend.once('error', (err) => {
    settled();
    answerRaw(client, 500, `error dialing the container runtime: ${errorMessage(err)}`);
  });
  backend.end();
}

/** The runtime's 101 head, its headers as it sent them. */
function responseHead(response: IncomingMessage): string {
  const lines = [`HTTP/1.1 ${response.statusCode} ${response.statusMessage || 'Switching Protocols'}`];
  for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) lines.push(`${response.rawHeaders[i]}: ${response.rawHeaders[i + 1]}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

async function relayRefusal(client: Duplex, response: IncomingMessage): Promise<void> {
  const body = await readUpTo(response, MAX_REFUSAL_BYTES);
  answerRaw(client, response.statusCode ?? 500, body.toString('utf8'), response.headers['content-type'] ?? 'text/plain; charset=utf-8');
}
