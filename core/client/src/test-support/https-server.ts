import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { ApiHandler, ApiRequest } from '@skiff/kernel';
import type { TestPki } from './tls.js';

export interface TestHttpsServer {
  url: string;
  /** The subject CN of the client certificate of each request (undefined when none was presented). */
  clientNames: (string | undefined)[];
  close(): Promise<void>;
}

/**
 * Serves an ApiHandler over real HTTPS the way the API server does: the raw body goes to the handler,
 * watch responses are flushed at once and written as one JSON event per line.
 */
export async function serveHttps(handler: ApiHandler, pki: TestPki): Promise<TestHttpsServer> {
  const clientNames: (string | undefined)[] = [];
  const server = https.createServer(
    { key: pki.server.keyPem, cert: pki.server.certPem, ca: pki.ca.certPem, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const commonName = (req.socket as TLSSocket).getPeerCertificate().subject?.CN;
      clientNames.push(Array.isArray(commonName) ? commonName[0] : commonName);
      serve(handler, req, res).catch((err: Error) => res.destroy(err));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    clientNames,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function serve(handler: ApiHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const url = new URL(req.url ?? '/', 'https://placeholder');
  const disconnected = new AbortController();
  res.on('close', () => disconnected.abort());
  const request: ApiRequest = {
    method: req.method as ApiRequest['method'],
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: req.headers as Record<string, string | undefined>,
    body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    signal: disconnected.signal,
  };
  const response = await handler.handle(request);
  if (response.stream) {
    res.writeHead(response.status, { 'content-type': 'application/json' });
    res.flushHeaders();
    for await (const event of response.stream) res.write(`${JSON.stringify(event)}\n`);
    res.end();
    return;
  }
  res.writeHead(response.status, { 'content-type': 'application/json' });
  res.end(response.body === undefined ? '' : JSON.stringify(response.body));
}
