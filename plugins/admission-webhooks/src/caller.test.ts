import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki } from '@skiff/apiserver';
import { WebhookCaller } from './caller.js';
import type { ServiceResolver } from './service-resolver.js';

// The caller against a real HTTPS server on 127.0.0.1 whose certificate a CA made here signed.

const dir = mkdtempSync(join(tmpdir(), 'admission-webhooks-caller-'));
const otherDir = mkdtempSync(join(tmpdir(), 'admission-webhooks-caller-other-'));
let server: Server;
let port = 0;
let connections = 0;
let caBundle = '';
const noServices = {} as ServiceResolver;

beforeAll(async () => {
  const pki = ensurePki(dir, '127.0.0.1');
  caBundle = Buffer.from(pki.caPem).toString('base64');
  server = createServer({ cert: pki.certPem, key: pki.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url?.startsWith('/never')) return;
      if (req.url?.startsWith('/broken')) return void res.writeHead(500).end('boom');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: JSON.parse(body), url: req.url }));
    });
  });
  server.on('secureConnection', () => connections++);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
  rmSync(otherDir, { recursive: true, force: true });
});

describe('WebhookCaller', () => {
  it('posts the review with ?timeout=<n>s and reads the JSON answer, over one kept-alive connection', async () => {
    const caller = new WebhookCaller({ url: `https://127.0.0.1:${port}/review`, caBundle }, noServices);
    const before = connections;
    expect(await caller.post('{"a":1}', 5)).toEqual({ echo: { a: 1 }, url: '/review?timeout=5s' });
    expect(await caller.post('{"a":2}', 5)).toEqual({ echo: { a: 2 }, url: '/review?timeout=5s' });
    expect(connections - before).toBe(1);
    caller.close();
  });

  it('gets through after the server closed an idle kept-alive connection', async () => {
    const caller = new WebhookCaller({ url: `https://127.0.0.1:${port}/review`, caBundle }, noServices);
    await caller.post('{}', 5);
    server.closeIdleConnections();
    expect(await caller.post('{"again":true}', 5)).toMatchObject({ echo: { again: true } });
    caller.close();
  });

  it('gives up at the deadline, in kube-apiserver words', async () => {
    const caller = new WebhookCaller({ url: `https://127.0.0.1:${port}/never`, caBundle }, noServices);
    const started = Date.now();
    await expect(caller.post('{}', 1)).rejects.toThrow(`Post "https://127.0.0.1:${port}/never?timeout=1s": context deadline exceeded`);
    expect(Date.now() - started).toBeLessThan(1_500);
    caller.close();
  });

  it('refuses a server its caBundle does not verify', async () => {
    const other = Buffer.from(ensurePki(otherDir, '127.0.0.1').caPem).toString('base64');
    const caller = new WebhookCaller({ url: `https://127.0.0.1:${port}/review`, caBundle: other }, noServices);
    await expect(caller.post('{}', 5)).rejects.toThrow('x509: certificate signed by unknown authority');
    caller.close();
  });

  it('for a service reference, verifies the certificate against <service>.<namespace>.svc', async () => {
    const resolver = { resolve: async () => ({ host: '127.0.0.1', port }) } as unknown as ServiceResolver;
    const caller = new WebhookCaller({ service: { namespace: 'webhooks', name: 'policy', path: '/review' }, caBundle }, resolver);
    await expect(caller.post('{}', 5)).rejects.toThrow(
      'Post "https://policy.webhooks.svc:443/review?timeout=5s": tls: failed to verify certificate: x509: certificate is valid for localhost,',
    );
    caller.close();
  });

  it('reports a non-2xx answer and a closed port', async () => {
    const caller = new WebhookCaller({ url: `https://127.0.0.1:${port}/broken`, caBundle }, noServices);
    await expect(caller.post('{}', 5)).rejects.toThrow('the webhook answered HTTP 500: boom');
    caller.close();
    const closed = new WebhookCaller({ url: 'https://127.0.0.1:1/x', caBundle }, noServices);
    await expect(closed.post('{}', 5)).rejects.toThrow('Post "https://127.0.0.1:1/x?timeout=5s": dial tcp 127.0.0.1:1: connect: connection refused');
    closed.close();
  });

  it('refuses a URL that is not https', () => {
    expect(() => new WebhookCaller({ url: 'http://127.0.0.1/x' }, noServices)).toThrow('is not https');
  });
});
