import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES, type KubeObject } from '@skiff/api';
import { waitFor } from '@skiff/kernel';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type SkiffClient } from '../client.js';
import { createClientFromKubeconfig } from '../connect.js';
import { SharedInformerFactory } from '../factory.js';
import { writeKubeconfig } from '../kubeconfig.js';
import { serveHttps, type TestHttpsServer } from '../test-support/https-server.js';
import { MemoryApiHandler } from '../test-support/memory-api.js';
import { createTestPki, type TestPki } from '../test-support/tls.js';
import { HttpsTransport } from './https.js';

// Two HTTPS servers over one handler are two API servers of one cluster: one state, one CA.
let pki: TestPki;
let handler: MemoryApiHandler;
let token: string;
const cleanups: (() => unknown)[] = [];

beforeAll(() => {
  pki = createTestPki();
  handler = new MemoryApiHandler();
  token = handler.issueLoopbackToken({ username: 'alice', groups: [] });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function apiServer(): Promise<TestHttpsServer> {
  const server = await serveHttps(handler, pki);
  cleanups.push(() => server.close());
  return server;
}

function connect(servers: string[], options: { connectTimeoutMs?: number } = {}): { client: SkiffClient; transport: HttpsTransport } {
  const transport = new HttpsTransport({ server: 'https://unused.invalid', servers, caPem: pki.ca.certPem, token, ...options });
  const client = createClient(transport);
  cleanups.push(() => client.close());
  return { client, transport };
}

/** A misbehaving server of the test's own on a free port; closing it drops whatever connections it still has. */
async function listen(server: net.Server): Promise<string> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(resolve);
      }),
  );
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A port nothing listens on (connections are refused). */
async function closedPort(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `https://127.0.0.1:${port}`;
}

describe('HttpsTransport with several servers', () => {
  it('uses the first server while it answers, and the next once it stops', async () => {
    const [first, second] = [await apiServer(), await apiServer()];
    const { client, transport } = connect([first.url, second.url]);
    await client.create(RESOURCES.namespaces, { metadata: { name: 'before-failover' } });
    expect(transport.server).toBe(`${first.url}/`);
    await first.close();
    await expect(client.get(RESOURCES.namespaces, 'before-failover')).resolves.toMatchObject({ metadata: { name: 'before-failover' } });
    expect(transport.server).toBe(`${second.url}/`);
    await client.create(RESOURCES.namespaces, { metadata: { name: 'after-failover' } });
    expect((await client.list(RESOURCES.namespaces)).items.map((ns) => ns.metadata.name)).toEqual(
      expect.arrayContaining(['before-failover', 'after-failover']),
    );
  });

  it('sends a write again when the connection was refused, so no byte of it was sent', async () => {
    const second = await apiServer();
    const { client, transport } = connect([await closedPort(), second.url]);
    await expect(client.create(RESOURCES.namespaces, { metadata: { name: 'refused-first' } })).resolves.toMatchObject({ metadata: { name: 'refused-first' } });
    expect(transport.server).toBe(`${second.url}/`);
  });

  it('moves on from a server whose TLS handshake fails, and from one that never finishes it', async () => {
    const stranger = createTestPki();
    const untrusted = await listen(https.createServer({ key: stranger.server.keyPem, cert: stranger.server.certPem }, (_req, res) => res.end('{}')));
    // Accepts the TCP connection and then says nothing: the handshake times out.
    const silent = await listen(net.createServer(() => undefined));
    const second = await apiServer();
    const { client, transport } = connect([untrusted, silent, second.url], { connectTimeoutMs: 300 });
    await expect(client.create(RESOURCES.namespaces, { metadata: { name: 'past-bad-tls' } })).resolves.toMatchObject({ metadata: { name: 'past-bad-tls' } });
    expect(transport.server).toBe(`${second.url}/`);
  });

  it('does not send a write again once it may have reached a server, but does send a read again', async () => {
    const received: string[] = [];
    // Reads the whole request, then drops the connection without answering.
    const dropping = await listen(
      https.createServer({ key: pki.server.keyPem, cert: pki.server.certPem }, (req) => {
        received.push(req.method ?? '');
        req.resume().on('end', () => req.socket.destroy());
      }),
    );
    const second = await apiServer();
    const writer = connect([dropping, second.url]);
    const requestsBefore = handler.requests.length;
    await expect(writer.client.create(RESOURCES.namespaces, { metadata: { name: 'maybe-written' } })).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(received).toEqual(['POST']);
    expect(handler.requests.length).toBe(requestsBefore);
    // The failed server is no longer current: the next request goes to the other one.
    expect(writer.transport.server).toBe(`${second.url}/`);

    const reader = connect([dropping, second.url]);
    await expect(reader.client.list(RESOURCES.namespaces)).resolves.toMatchObject({ kind: 'NamespaceList' });
    expect(received).toEqual(['POST', 'GET']);
  });

  it('gives up with the last error when every server fails', async () => {
    const { client } = connect([await closedPort(), await closedPort()]);
    await expect(client.list(RESOURCES.namespaces)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('keeps an HTTP error answer from the server it came from', async () => {
    const unavailable = await listen(
      https.createServer({ key: pki.server.keyPem, cert: pki.server.certPem }, (_req, res) => {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('shutting down');
      }),
    );
    const second = await apiServer();
    const { client, transport } = connect([unavailable, second.url]);
    await expect(client.list(RESOURCES.namespaces)).rejects.toMatchObject({ status: 503, message: 'shutting down' });
    expect(transport.server).toBe(`${unavailable}/`);
  });

  it('lets an informer whose watch broke watch again on the next server, missing no event', async () => {
    const [first, second] = [await apiServer(), await apiServer()];
    const { client, transport } = connect([first.url, second.url]);
    const factory = new SharedInformerFactory(client, { resyncMs: 0, retry: { initialMs: 10, maxMs: 50 } });
    const informer = factory.informer<KubeObject>(RESOURCES.configmaps, { namespace: 'default' });
    const stop = new AbortController();
    cleanups.push(async () => {
      stop.abort();
      await factory.stopped();
    });
    factory.start(stop.signal);
    await factory.waitForSync(stop.signal);
    await waitFor('the watch to open', () => handler.openWatches() === 1);

    // The first server goes away with the watch open (its connections are destroyed, not ended).
    await first.close();
    await waitFor('the informer to leave the first server', () => transport.server === `${second.url}/`);
    const admin = connect([second.url]).client;
    await admin.create(RESOURCES.configmaps, { metadata: { name: 'after-the-break' }, data: { a: '1' } }, 'default');
    await waitFor('the informer to see the ConfigMap made after the break', () => informer.get('default/after-the-break') !== undefined);
  });

  it("takes the servers in place of a kubeconfig's own, with its CA and credentials", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-failover-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'kubeconfig');
    writeKubeconfig(path, { server: await closedPort(), caPem: pki.ca.certPem, token });
    const second = await apiServer();
    const client = createClientFromKubeconfig(path, undefined, { servers: [await closedPort(), second.url] });
    cleanups.push(() => client.close());
    await expect(client.list(RESOURCES.namespaces)).resolves.toMatchObject({ kind: 'NamespaceList' });
  });

  it('refuses a mix of https and http servers', () => {
    expect(() => new HttpsTransport({ server: 'https://a', servers: ['https://a:6443', 'http://b:8080'] })).toThrow('must all be https:// or all http://');
  });
});
