import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError, RESOURCES, type KubeObject } from '@skiff/api';
import { waitFor, type WatchEvent } from '@skiff/kernel';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type SkiffClient } from '../client.js';
import { createClientFromKubeconfig } from '../connect.js';
import { writeKubeconfig } from '../kubeconfig.js';
import { serveHttps, type TestHttpsServer } from '../test-support/https-server.js';
import { MemoryApiHandler } from '../test-support/memory-api.js';
import { createTestPki, issueClientCertificate, type TestPki } from '../test-support/tls.js';
import { HttpsTransport } from './https.js';
import { watchEventsFromLines } from './ndjson.js';

let pki: TestPki;
let handler: MemoryApiHandler;
let server: TestHttpsServer;
let token: string;
const clients: SkiffClient[] = [];

function connect(options: Partial<ConstructorParameters<typeof HttpsTransport>[0]> = {}): SkiffClient {
  const client = createClient(new HttpsTransport({ server: server.url, caPem: pki.ca.certPem, token, ...options }));
  clients.push(client);
  return client;
}

beforeAll(async () => {
  pki = createTestPki();
  handler = new MemoryApiHandler();
  token = handler.issueLoopbackToken({ username: 'alice', groups: [] });
  server = await serveHttps(handler, pki);
});

afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});

afterAll(async () => {
  await server.close();
});

describe('HttpsTransport', () => {
  it('verifies the server against the given CA, sends the token and JSON bodies', async () => {
    const client = connect();
    const created = await client.create(RESOURCES.namespaces, { metadata: { name: 'over-tls', labels: { ünï: 'cødé' } } });
    expect(created.metadata).toMatchObject({ name: 'over-tls', resourceVersion: expect.any(String) });
    const request = handler.requests.at(-1)!;
    expect(request.headers).toMatchObject({ authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' });
    expect(JSON.parse(String(request.body))).toEqual({ metadata: { name: 'over-tls', labels: { ünï: 'cødé' } } });
    expect((await client.get(RESOURCES.namespaces, 'over-tls')).metadata.labels).toEqual({ ünï: 'cødé' });
  });

  it('refuses a server its CAs do not vouch for, unless told to skip verification', async () => {
    const untrusting = connect({ caPem: undefined });
    await expect(untrusting.list(RESOURCES.namespaces)).rejects.toMatchObject({ code: expect.stringMatching(/CERT|SIGNATURE|ISSUER/) });
    const trusting = connect({ caPem: undefined, insecureSkipTlsVerify: true });
    await expect(trusting.list(RESOURCES.namespaces)).resolves.toMatchObject({ kind: 'NamespaceList' });
  });

  it('presents the client certificate', async () => {
    const client = connect({ certPem: pki.client.certPem, keyPem: pki.client.keyPem });
    await client.list(RESOURCES.namespaces);
    expect(server.clientNames.at(-1)).toBe('alice');
  });

  it('takes a rotated client certificate for the requests that follow', async () => {
    const transport = new HttpsTransport({ server: server.url, caPem: pki.ca.certPem, token, certPem: pki.client.certPem, keyPem: pki.client.keyPem });
    const client = createClient(transport);
    clients.push(client);
    await client.list(RESOURCES.namespaces);
    expect(server.clientNames.at(-1)).toBe('alice');
    const rotated = issueClientCertificate(pki.ca, 'alice-rotated');
    transport.setClientCertificate(rotated.certPem, rotated.keyPem);
    await client.list(RESOURCES.namespaces);
    expect(server.clientNames.at(-1)).toBe('alice-rotated');
  });

  it('turns a Status answer into an ApiError, and a bad token into 401', async () => {
    const err = await connect()
      .get(RESOURCES.pods, 'absent', 'default')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 404, reason: 'NotFound', message: 'pods "absent" not found' });
    await expect(connect({ token: 'wrong' }).list(RESOURCES.pods)).rejects.toMatchObject({ status: 401, reason: 'Unauthorized' });
  });

  it('reuses one keep-alive connection for consecutive requests', async () => {
    const sockets = new Set<unknown>();
    const probe = https.createServer({ key: pki.server.keyPem, cert: pki.server.certPem }, (req, res) => {
      sockets.add(req.socket);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const probeClient = connect({ server: `https://127.0.0.1:${(probe.address() as AddressInfo).port}` });
    for (let i = 0; i < 5; i++) await probeClient.get(RESOURCES.namespaces, 'x');
    probeClient.close();
    await new Promise((resolve) => probe.close(resolve));
    expect(sockets.size).toBe(1);
  });

  it('retries once on a fresh connection when a pooled one turns out to be closed', async () => {
    const requestsPerSocket = new Map<unknown, number>();
    let served = 0;
    const flaky = https.createServer({ key: pki.server.keyPem, cert: pki.server.certPem }, (req, res) => {
      const count = (requestsPerSocket.get(req.socket) ?? 0) + 1;
      requestsPerSocket.set(req.socket, count);
      // Like a server whose keep-alive timeout fired just as the client reused the connection.
      if (count > 1) return req.socket.destroy();
      served += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"metadata":{"name":"x"}}');
    });
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    try {
      const client = connect({ server: `https://127.0.0.1:${(flaky.address() as AddressInfo).port}` });
      await client.get(RESOURCES.namespaces, 'x');
      await expect(client.get(RESOURCES.namespaces, 'x')).resolves.toMatchObject({ metadata: { name: 'x' } });
      expect(served).toBe(2);
      expect(requestsPerSocket.size).toBe(2);
    } finally {
      await new Promise((resolve) => flaky.close(resolve));
    }
  });

  it('streams a watch as NDJSON until aborted, and the server sees the disconnect', async () => {
    const client = connect();
    const controller = new AbortController();
    const events: WatchEvent<KubeObject>[] = [];
    const consumed = (async () => {
      for await (const event of client.watch(RESOURCES.pods, 'default', { resourceVersion: String(handler.currentRevision()), signal: controller.signal })) {
        events.push(event);
      }
    })();
    await waitFor('the watch to open', () => handler.openWatches() === 1);
    await client.create(RESOURCES.pods, { metadata: { name: 'p1' }, spec: { containers: [] } }, 'default');
    await client.delete(RESOURCES.pods, 'p1', 'default');
    await waitFor('two events', () => events.length === 2);
    expect(events.map((e) => [e.type, (e.object as KubeObject).metadata.name])).toEqual([
      ['ADDED', 'p1'],
      ['DELETED', 'p1'],
    ]);
    controller.abort();
    await consumed;
    await waitFor('the server to see the watch end', () => handler.openWatches() === 0);
  });

  it('reads a proxy-style plain-text error as the message', async () => {
    const proxy = https.createServer({ key: pki.server.keyPem, cert: pki.server.certPem }, (_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream unreachable\n');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const client = connect({ server: `https://127.0.0.1:${(proxy.address() as AddressInfo).port}/prefix` });
      await expect(client.list(RESOURCES.pods)).rejects.toMatchObject({ status: 503, reason: 'ServiceUnavailable', message: 'upstream unreachable' });
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('keeps a server path prefix', async () => {
    const paths: string[] = [];
    const prefixed = https.createServer({ key: pki.server.keyPem, cert: pki.server.certPem }, (req, res) => {
      paths.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"items":[],"metadata":{}}');
    });
    await new Promise<void>((resolve) => prefixed.listen(0, '127.0.0.1', resolve));
    try {
      const client = connect({ server: `https://127.0.0.1:${(prefixed.address() as AddressInfo).port}/k8s/` });
      await client.list(RESOURCES.pods, 'a b', { limit: 5 });
      expect(paths).toEqual(['/k8s/api/v1/namespaces/a%20b/pods?limit=5']);
    } finally {
      await new Promise((resolve) => prefixed.close(resolve));
    }
  });

  it('rejects a server URL that is not http(s)', () => {
    expect(() => new HttpsTransport({ server: 'ftp://x' })).toThrow('expected an https:// or http:// URL');
    expect(() => new HttpsTransport({ server: 'not a url' })).toThrow('invalid server URL');
  });

  it('connects from a kubeconfig', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-https-'));
    try {
      const path = join(dir, 'kubeconfig');
      writeKubeconfig(path, { server: server.url, caPem: pki.ca.certPem, certPem: pki.client.certPem, keyPem: pki.client.keyPem, token, namespace: 'team-a' });
      const client = createClientFromKubeconfig(path);
      clients.push(client);
      expect(client.namespace).toBe('team-a');
      await client.create(RESOURCES.namespaces, { metadata: { name: 'from-kubeconfig' } });
      expect(server.clientNames.at(-1)).toBe('alice');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('watchEventsFromLines', () => {
  async function decode(chunks: (string | Buffer)[]): Promise<WatchEvent[]> {
    const events: WatchEvent[] = [];
    for await (const event of watchEventsFromLines(
      (async function* () {
        yield* chunks;
      })(),
      '/api/v1/pods',
    ))
      events.push(event);
    return events;
  }

  it('reassembles events split across chunks, including inside a UTF-8 character', async () => {
    const line = Buffer.from('{"type":"ADDED","object":{"metadata":{"name":"ä"}}}\n\n{"type":"BOOKMARK","object":{"metadata":{}}}');
    const split = line.indexOf(Buffer.from('ä')) + 1;
    const events = await decode([line.subarray(0, 10), line.subarray(10, split), line.subarray(split)]);
    expect(events).toEqual([
      { type: 'ADDED', object: { metadata: { name: 'ä' } } },
      { type: 'BOOKMARK', object: { metadata: {} } },
    ]);
  });

  it('fails with the path on a line that is not a watch event', async () => {
    await expect(decode(['{"type":"ADDED","object":{}}\n', 'oops\n'])).rejects.toThrow('cannot decode a watch event from /api/v1/pods');
    await expect(decode(['[1,2]\n'])).rejects.toThrow('not a watch event');
  });
});
