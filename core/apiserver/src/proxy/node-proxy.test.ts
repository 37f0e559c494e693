import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBELET_CLIENT_USER } from '../streaming/remote-node-client.js';
import { startTestServer, type TestServer } from '../test-support/cluster.js';
import { upgradeRequest } from '../test-support/test-clients.js';
import { servingPki } from '../test-support/test-node.js';
import { isGlobalUnicast } from './target.js';

// nodes/<name>/proxy to kubelets that serve HTTPS as upstream's kubelet does: they take only clients whose
// certificate the cluster CA issued, and their serving certificate must be from that CA too. nodes/proxy
// refuses loopback addresses (kube-apiserver's isProxyableHostname), so the stand-in kubelets listen on this
// machine's own non-loopback address.

const HOST_IP = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry?.family === 'IPv4' && !entry.internal && isGlobalUnicast(entry.address))?.address;
const MERGE = 'application/merge-patch+json';
const PODS = { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [{ metadata: { name: 'web', namespace: 'default' } }] };

interface SeenRequest {
  path: string;
  user: string;
  groups: string[];
  authorization: string | undefined;
}

interface StandInKubelet {
  port: number;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/** Who presented which client certificate (the server only takes ones the cluster CA issued). */
function seen(req: IncomingMessage): SeenRequest {
  const subject = (req.socket as TLSSocket).getPeerCertificate().subject as unknown as Record<string, string | string[]>;
  return {
    path: req.url ?? '',
    user: [subject.CN].flat()[0] ?? '',
    groups: [subject.O ?? []].flat(),
    authorization: req.headers.authorization,
  };
}

/** A kubelet's HTTPS API in miniature: /healthz, /pods, and an `Upgrade: echo` that echoes what it is sent. */
async function startStandInKubelet(tls: { caPem: string; certPem: string; keyPem: string }, port = 0): Promise<StandInKubelet> {
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem, ca: tls.caPem, requestCert: true, rejectUnauthorized: true });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (req, res) => {
    requests.push(seen(req));
    if (req.url === '/healthz') return res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('ok');
    if (req.url === '/pods') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(PODS));
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found');
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    requests.push(seen(req));
    socket.on('error', () => socket.destroy());
    socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
    if (head.length) socket.write(head);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST_IP, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(!HOST_IP)('nodes/proxy to a kubelet over HTTPS', () => {
  let dir: string;
  let server: TestServer;
  let kubelet: StandInKubelet;
  let foreignKubelet: StandInKubelet;
  let plain: HttpServer;

  async function createNode(name: string, addresses: { type: string; address: string }[], port?: number): Promise<void> {
    expect((await server.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name } } })).status).toBe(201);
    const status = { addresses, ...(port === undefined ? {} : { daemonEndpoints: { kubeletEndpoint: { Port: port } } }) };
    const patched = await server.request('PATCH', `/api/v1/nodes/${name}/status`, { body: { status }, contentType: MERGE });
    expect(patched.status, patched.text).toBe(200);
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'skiff-node-proxy-'));
    server = await startTestServer({ testDefinitions: false });
    kubelet = await startStandInKubelet(servingPki(join(dir, 'kubelet'), HOST_IP!, server.dataDir));
    foreignKubelet = await startStandInKubelet(servingPki(join(dir, 'foreign'), HOST_IP!));
    plain = createHttpServer((req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`plain ${req.url} ${req.socket.localPort}`));
    await new Promise<void>((resolve) => plain.listen(0, HOST_IP, resolve));
    await createNode(
      'node-a',
      [
        { type: 'Hostname', address: 'node-a' },
        { type: 'InternalIP', address: HOST_IP! },
      ],
      kubelet.port,
    );
    await createNode('node-foreign', [{ type: 'InternalIP', address: HOST_IP! }], foreignKubelet.port);
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    await kubelet?.close();
    await foreignKubelet?.close();
    await new Promise((resolve) => plain?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it("reaches the kubelet's /healthz and /pods, presenting the API server's kubelet client certificate", async () => {
    const healthz = await server.request('GET', '/api/v1/nodes/node-a/proxy/healthz');
    expect(healthz.status, healthz.text).toBe(200);
    expect(healthz.text).toBe('ok');
    expect(kubelet.requests.at(-1)).toEqual({ path: '/healthz', user: KUBELET_CLIENT_USER, groups: ['system:masters'], authorization: undefined });
    const pods = await server.request('GET', '/api/v1/nodes/node-a/proxy/pods');
    expect(pods.status, pods.text).toBe(200);
    expect(pods.json).toEqual(PODS);
    expect(kubelet.requests.at(-1)).toMatchObject({ path: '/pods', user: KUBELET_CLIENT_USER });
  });

  it('takes the kubelet port named in the request, with or without https, as the kubelet', async () => {
    for (const name of [`node-a:${kubelet.port}`, `https:node-a:${kubelet.port}`]) {
      const answer = await server.request('GET', `/api/v1/nodes/${name}/proxy/healthz`);
      expect(answer.status, answer.text).toBe(200);
      expect(kubelet.requests.at(-1)).toMatchObject({ path: '/healthz', user: KUBELET_CLIENT_USER });
    }
  });

  it('reaches another port of the node as it is asked, with no client certificate', async () => {
    const port = (plain.address() as AddressInfo).port;
    const answer = await server.request('GET', `/api/v1/nodes/node-a:${port}/proxy/metrics`);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).toBe(`plain /metrics ${port}`);
  });

  it('relays an upgrade to the kubelet over the same TLS', async () => {
    const outcome = await upgradeRequest(server.info, 'GET', '/api/v1/nodes/node-a/proxy/echo', { upgrade: 'echo', authorization: 'Bearer admin-token' });
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    const echoed = new Promise<string>((resolve) => outcome.socket.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    outcome.socket.write('ping through the kubelet');
    expect(await echoed).toBe('ping through the kubelet');
    outcome.socket.destroy();
    expect(kubelet.requests.at(-1)).toEqual({ path: '/echo', user: KUBELET_CLIENT_USER, groups: ['system:masters'], authorization: undefined });
  });

  it('refuses a kubelet whose serving certificate is not from the cluster CA, for requests and upgrades', async () => {
    const refused = await server.request('GET', '/api/v1/nodes/node-foreign/proxy/healthz');
    expect(refused.json).toMatchObject({
      kind: 'Status',
      code: 503,
      reason: 'ServiceUnavailable',
      message: 'error trying to reach service: tls: failed to verify certificate: x509: certificate signed by unknown authority',
    });
    const upgrade = await upgradeRequest(server.info, 'GET', '/api/v1/nodes/node-foreign/proxy/echo', { upgrade: 'echo', authorization: 'Bearer admin-token' });
    expect(upgrade).toMatchObject({
      upgraded: false,
      status: 500,
      body: {
        kind: 'Status',
        message: 'Internal error occurred: error dialing backend: tls: failed to verify certificate: x509: certificate signed by unknown authority',
      },
    });
    expect(foreignKubelet.requests).toEqual([]);
  });

  it('prefers InternalIP, then ExternalIP, then Hostname and the DNS names, as pods/log and exec do', async () => {
    // A loopback address or a name that does not resolve is refused: reaching the kubelet shows which address was taken.
    await createNode(
      'node-internal',
      [
        { type: 'Hostname', address: 'node-internal.invalid' },
        { type: 'ExternalIP', address: '127.0.0.1' },
        { type: 'InternalIP', address: HOST_IP! },
      ],
      kubelet.port,
    );
    await createNode(
      'node-external',
      [
        { type: 'InternalDNS', address: 'node-external.invalid' },
        { type: 'Hostname', address: 'node-external.invalid' },
        { type: 'ExternalIP', address: HOST_IP! },
      ],
      kubelet.port,
    );
    await createNode(
      'node-loopback',
      [
        { type: 'ExternalDNS', address: 'node.invalid' },
        { type: 'Hostname', address: 'localhost' },
      ],
      kubelet.port,
    );
    await createNode('node-nowhere', [], kubelet.port);
    for (const name of ['node-internal', 'node-external']) {
      const answer = await server.request('GET', `/api/v1/nodes/${name}/proxy/healthz`);
      expect(answer.status, `${name}: ${answer.text}`).toBe(200);
    }
    expect((await server.request('GET', '/api/v1/nodes/node-loopback/proxy/healthz')).json).toMatchObject({ code: 400, message: 'address not allowed' });
    expect((await server.request('GET', '/api/v1/nodes/node-nowhere/proxy/healthz')).json).toMatchObject({
      code: 500,
      message: 'Internal error occurred: no preferred addresses found; known addresses: []',
    });
  });

  it('dials port 10250 when the Node reports no kubelet port', async (context) => {
    let standard: StandInKubelet;
    try {
      standard = await startStandInKubelet(servingPki(join(dir, 'kubelet'), HOST_IP!, server.dataDir), 10250);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') return context.skip();
      throw err;
    }
    try {
      await createNode('node-default-port', [{ type: 'InternalIP', address: HOST_IP! }], 0);
      const answer = await server.request('GET', '/api/v1/nodes/node-default-port/proxy/healthz');
      expect(answer.status, answer.text).toBe(200);
      expect(standard.requests).toEqual([{ path: '/healthz', user: KUBELET_CLIENT_USER, groups: ['system:masters'], authorization: undefined }]);
    } finally {
      await standard.close();
    }
  });
});
