import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createTestPki, type TestPki } from './test-support/tls.js';
import { postWebhook, type WebhookPostOptions } from './webhook-post.js';

// postWebhook against a real HTTPS server on 127.0.0.1 with a certificate from a test CA.

let pki: TestPki;
let server: Server;
let port = 0;

beforeAll(async () => {
  pki = createTestPki();
  server = createServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url === '/never') return;
      if (req.url === '/broken') return void res.writeHead(500).end('boom');
      if (req.url === '/large') return void res.writeHead(200).end('x'.repeat(2048));
      if (req.url === '/text') return void res.writeHead(200).end('not json');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: JSON.parse(body), url: req.url, host: req.headers.host }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function options(path: string, overrides: Partial<WebhookPostOptions> = {}): WebhookPostOptions {
  return {
    agent: new Agent({ ca: pki.ca.certPem }),
    url: new URL(`https://hook.example.svc:8443${path}`),
    address: { host: '127.0.0.1', port },
    servername: 'localhost',
    body: '{"a":1}',
    signal: AbortSignal.timeout(5_000),
    maxResponseBytes: 1024,
    failure: (why) => new Error(`Post: ${why}`),
    statusFailure: (status, text) => `status ${status}: ${text}`,
    ...overrides,
  };
}

describe('postWebhook', () => {
  it('posts to the resolved address with the URL’s path, query and Host, and parses the JSON answer', async () => {
    expect(await postWebhook(options('/review?timeout=5s'))).toEqual({ echo: { a: 1 }, url: '/review?timeout=5s', host: 'hook.example.svc:8443' });
  });

  it('fails in the caller’s words: a non-2xx answer, an answer that is not JSON or too large, the deadline', async () => {
    await expect(postWebhook(options('/broken'))).rejects.toThrow('Post: status 500: boom');
    await expect(postWebhook(options('/text'))).rejects.toThrow('Post: the answer is not JSON');
    await expect(postWebhook(options('/large'))).rejects.toThrow('Post: the answer is larger than 1024 bytes');
    await expect(postWebhook(options('/never', { signal: AbortSignal.timeout(200) }))).rejects.toThrow('Post: context deadline exceeded');
  });

  it('words dial and certificate failures as Go does', async () => {
    await expect(postWebhook(options('/review', { agent: new Agent() }))).rejects.toThrow(
      'Post: tls: failed to verify certificate: x509: certificate signed by unknown authority',
    );
    await expect(postWebhook(options('/review', { servername: 'elsewhere.example' }))).rejects.toThrow(
      'Post: tls: failed to verify certificate: x509: certificate is valid for localhost, not elsewhere.example',
    );
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(postWebhook(options('/review', { address: { host: '127.0.0.1', port: closedPort } }))).rejects.toThrow(
      `Post: dial tcp 127.0.0.1:${closedPort}: connect: connection refused`,
    );
  });
});
