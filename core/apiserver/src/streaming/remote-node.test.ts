import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node } from '@skiff/api';
import { startTestServer, type TestServer } from '../test-support/cluster.js';
import { firstChunk, forwardPing, spdySession, tunnelledSocket, upgradeRequest, webSocketClient, webSocketHeaders } from '../test-support/test-clients.js';
import { FakeNode, nodeConnectionsPlugin, servingPki } from '../test-support/test-node.js';
import { receivedText, startTestRuntime, type TestRuntime } from '../test-support/test-runtime.js';
import { KUBELET_CLIENT_USER } from './remote-node-client.js';
import { kubeletEndpoint, RemoteNodeConnection } from './remote-node.js';
import { SpdySession } from './spdy/session.js';

// Pods on nodes whose kubelet runs in another process: the API server finds no in-process connection and
// reaches the node's kubelet over HTTPS, at the Node's address, with its own client certificate. The kubelet
// here is a stand-in that requires a client certificate from the cluster CA, answers /containerLogs, and
// carries /exec, /attach and /portForward upgrades byte for byte to a stand-in runtime streaming server.

interface KubeletRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  user: string;
  groups: string[];
  headers: IncomingMessage['headers'];
  closed: boolean;
}

interface StandInKubelet {
  port: number;
  requests: KubeletRequest[];
  /** The runtime token the next upgrade goes to. */
  token: string;
  close(): Promise<void>;
}

const RUNTIME_KINDS: Record<string, string> = { exec: 'exec', attach: 'attach', portForward: 'portforward' };

async function startStandInKubelet(tls: { caPem: string; certPem: string; keyPem: string }, runtime: () => TestRuntime): Promise<StandInKubelet> {
  const sockets = new Set<Socket>();
  const record = (req: IncomingMessage): KubeletRequest => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const subject = (req.socket as TLSSocket).getPeerCertificate().subject as unknown as Record<string, string | string[]>;
    const entry = {
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      user: [subject.CN].flat()[0] ?? '',
      groups: [subject.O ?? []].flat(),
      headers: req.headers,
      closed: false,
    };
    kubelet.requests.push(entry);
    return entry;
  };
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem, ca: tls.caPem, requestCert: true, rejectUnauthorized: true });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const entry = record(req);
    res.once('close', () => (entry.closed = true));
    const container = entry.path.split('/')[4];
    if (container === 'app') return res.writeHead(200, { 'content-type': 'text/plain' }).end(`log of ${entry.path}\n`);
    if (container === 'waiting')
      return res.writeHead(400, { 'content-type': 'text/plain' }).end('container "waiting" in pod "remote-web" is waiting to start: ContainerCreating\n');
    if (container === 'gone') {
      const status = {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'pod "remote-web" (uid x) is not on node "node-remote"',
        reason: 'NotFound',
        code: 404,
      };
      return res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify(status));
    }
    if (container === 'endless') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.write('first\n');
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found');
  });
  server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on('error', () => client.destroy());
    const entry = record(req);
    const kind = RUNTIME_KINDS[entry.path.split('/')[1] ?? ''] ?? 'unknown';
    const runtimeUrl = new URL(runtime().url(kind, kubelet.token));
    const backend = connect(Number(runtimeUrl.port), runtimeUrl.hostname, () => {
      const protocols = req.headersDistinct['x-stream-protocol-version'] ?? [];
      backend.write(
        [
          `${req.method} ${runtimeUrl.pathname} HTTP/1.1`,
          `Host: ${runtimeUrl.host}`,
          'Connection: Upgrade',
          `Upgrade: ${req.headers.upgrade}`,
          ...protocols.map((protocol) => `X-Stream-Protocol-Version: ${protocol}`),
          'Content-Length: 0',
          '\r\n',
        ].join('\r\n'),
      );
      if (head.length) backend.write(head);
      client.pipe(backend);
      backend.pipe(client);
    });
    backend.on('error', () => client.destroy());
    client.once('close', () => backend.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kubelet: StandInKubelet = {
    port: (server.address() as AddressInfo).port,
    requests: [],
    token: 'unset',
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return kubelet;
}

let dir: string;
let server: TestServer;
let runtime: TestRuntime;
let kubelet: StandInKubelet;
let foreignKubelet: StandInKubelet;
let uid: string;
const localNode = new FakeNode(() => runtime);
const PODS = '/api/v1/namespaces/default/pods';
const ADMIN = { authorization: 'Bearer admin-token' };
const target = () => ({ url: server.info.url, caPem: server.info.caPem });

async function createNode(name: string, port: number): Promise<void> {
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name } };
  expect((await server.request('POST', '/api/v1/nodes', { body: node })).status).toBe(201);
  const status = {
    status: {
      addresses: [
        { type: 'Hostname', address: name },
        { type: 'InternalIP', address: '127.0.0.1' },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: port } },
    },
  };
  const patched = await server.request('PATCH', `/api/v1/nodes/${name}/status`, { body: status, contentType: 'application/merge-patch+json' });
  expect(patched.status).toBe(200);
}

async function createPod(name: string, nodeName: string, containers: string[]): Promise<string> {
  const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName, containers: containers.map((c) => ({ name: c, image: 'busybox' })) } };
  const created = await server.request('POST', PODS, { body });
  expect(created.status).toBe(201);
  return created.json.metadata.uid;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'skiff-remote-node-'));
  runtime = await startTestRuntime();
  server = await startTestServer({ testDefinitions: false, plugins: [nodeConnectionsPlugin({ 'node-local': localNode })] });
  kubelet = await startStandInKubelet(servingPki(join(dir, 'kubelet'), '127.0.0.1', server.dataDir), () => runtime);
  foreignKubelet = await startStandInKubelet(servingPki(join(dir, 'foreign'), '127.0.0.1'), () => runtime);
  await createNode('node-remote', kubelet.port);
  await createNode('node-foreign', foreignKubelet.port);
  await createNode('node-local', kubelet.port);
  uid = await createPod('remote-web', 'node-remote', ['app', 'waiting', 'gone', 'endless']);
  await createPod('foreign-web', 'node-foreign', ['app']);
  await createPod('local-web', 'node-local', ['app']);
});
afterAll(async () => {
  await server?.stop();
  await kubelet?.close();
  await foreignKubelet?.close();
  await runtime?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the kubelet endpoint of a Node', () => {
  const node = (addresses: { type: string; address: string }[], port?: number): Node => ({
    metadata: { name: 'n' },
    status: { addresses, ...(port === undefined ? {} : { daemonEndpoints: { kubeletEndpoint: { Port: port } } }) },
  });

  it('takes the InternalIP first, then ExternalIP, Hostname and the DNS names; the reported port or 10250', () => {
    const all = [
      { type: 'InternalDNS', address: 'n.internal' },
      { type: 'Hostname', address: 'n' },
      { type: 'ExternalIP', address: '203.0.113.7' },
      { type: 'InternalIP', address: '10.0.0.7' },
    ];
    expect(kubeletEndpoint(node(all, 10255))).toEqual({ host: '10.0.0.7', port: 10255 });
    expect(kubeletEndpoint(node(all.slice(0, 3)))).toEqual({ host: '203.0.113.7', port: 10250 });
    expect(kubeletEndpoint(node(all.slice(0, 2), 0))).toEqual({ host: 'n', port: 10250 });
    expect(kubeletEndpoint(node(all.slice(0, 1)))).toEqual({ host: 'n.internal', port: 10250 });
    expect(() => kubeletEndpoint(node([{ type: 'Unknown', address: 'x' }]))).toThrow('no preferred addresses found; known addresses: [{Unknown x}]');
  });

  it("names the kubelet's stream paths with the pod's uid and kube-apiserver's parameter names", async () => {
    const tls = { ca: '', cert: '', key: '' };
    const pod = { namespace: 'team a', name: 'web', uid: 'u-1' };
    const v4 = new RemoteNodeConnection({ host: '10.0.0.7', port: 10250 }, tls);
    expect(await v4.streamURL('exec', pod, 'app', { cmd: ['sh', '-c', 'echo hi'], stdin: true, stdout: true, stderr: true, tty: false })).toBe(
      'https://10.0.0.7:10250/exec/team%20a/web/u-1/app?command=sh&command=-c&command=echo+hi&input=1&output=1&error=1',
    );
    expect(await v4.streamURL('attach', pod, 'app', { stdin: true, stdout: true, tty: true })).toBe(
      'https://10.0.0.7:10250/attach/team%20a/web/u-1/app?input=1&output=1&tty=1',
    );
    const v6 = new RemoteNodeConnection({ host: 'fd00::7', port: 10250 }, tls);
    expect(await v6.portForwardURL(pod, [80, 443])).toBe('https://[fd00::7]:10250/portForward/team%20a/web/u-1?port=80&port=443');
  });
});

describe('pods/log from a kubelet over HTTPS', () => {
  it("reads the kubelet's /containerLogs with the log options, presenting the API server's client certificate", async () => {
    const response = await server.request('GET', `${PODS}/remote-web/log?container=app&follow=true&tailLines=5&timestamps=1&limitBytes=100&sinceSeconds=60`);
    expect(response.status).toBe(200);
    expect(response.text).toBe('log of /containerLogs/default/remote-web/app\n');
    const seen = kubelet.requests.at(-1)!;
    expect(seen).toMatchObject({ method: 'GET', path: '/containerLogs/default/remote-web/app', user: KUBELET_CLIENT_USER, groups: ['system:masters'] });
    expect(Object.fromEntries(seen.query)).toEqual({ follow: 'true', timestamps: 'true', tailLines: '5', limitBytes: '100', sinceSeconds: '60' });
  });

  it("answers the kubelet's refusals as Statuses: its text with its code, or the Status it sent", async () => {
    expect((await server.request('GET', `${PODS}/remote-web/log?container=waiting`)).json).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'container "waiting" in pod "remote-web" is waiting to start: ContainerCreating',
    });
    expect((await server.request('GET', `${PODS}/remote-web/log?container=gone`)).json).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'pod "remote-web" (uid x) is not on node "node-remote"',
    });
  });

  it('stops reading from the kubelet when the client goes away', async () => {
    expect(await firstChunk(target(), `${PODS}/remote-web/log?container=endless&follow=true`, ADMIN)).toBe('first\n');
    const seen = kubelet.requests.at(-1)!;
    expect(seen.path).toBe('/containerLogs/default/remote-web/endless');
    await expect.poll(() => seen.closed).toBe(true);
  });

  it('refuses a kubelet whose serving certificate is not from the cluster CA', async () => {
    const before = foreignKubelet.requests.length;
    const answer = await server.request('GET', `${PODS}/foreign-web/log`);
    expect(answer.json).toMatchObject({ code: 500, message: expect.stringMatching(/error dialing backend: .*certificate/) });
    expect(foreignKubelet.requests.length).toBe(before);
  });

  it('keeps the in-process connection of a node as the fast path', async () => {
    const before = kubelet.requests.length;
    expect((await server.request('GET', `${PODS}/local-web/log`)).text).toBe('line 1\nline 2\n');
    expect(localNode.logCalls.at(-1)).toMatchObject({ pod: { name: 'local-web' }, container: 'app' });
    expect(kubelet.requests.length).toBe(before);
  });
});

describe('exec, attach and port-forward through a kubelet over HTTPS', () => {
  it('passes a SPDY exec through the kubelet to the runtime', async () => {
    kubelet.token = 'remote-spdy';
    runtime.expect('exec', 'remote-spdy', ['error', 'stdin', 'stdout', 'stderr'], async (streams, session) => {
      await session.ended('stdin');
      streams.get('stdout')!.write(Buffer.from(`got ${receivedText(streams.get('stdin'))}`));
      return 3;
    });
    const outcome = await upgradeRequest(
      target(),
      'POST',
      `${PODS}/remote-web/exec?container=app&command=sh&command=-c&command=exit%203&stdin=true&stdout=true&stderr=true`,
      {
        ...ADMIN,
        upgrade: 'SPDY/3.1',
        'x-stream-protocol-version': ['v4.channel.k8s.io', 'channel.k8s.io'],
      },
    );
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    const session = spdySession(outcome.socket, outcome.head);
    const out: Record<string, string> = { stdout: '', error: '' };
    const open = (type: string) => session.openStream({ streamtype: type }, { data: (chunk) => (out[type] = (out[type] ?? '') + chunk.toString()) });
    await open('error');
    const stdin = await open('stdin');
    await open('stdout');
    await open('stderr');
    stdin.write(Buffer.from('input'));
    stdin.end();
    await session.closed;
    expect(out.stdout).toBe('got input');
    expect(JSON.parse(out.error!)).toMatchObject({ reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] } });
    const seen = kubelet.requests.at(-1)!;
    expect(seen).toMatchObject({ method: 'POST', path: `/exec/default/remote-web/${uid}/app`, user: KUBELET_CLIENT_USER });
    expect(seen.query.toString()).toBe('command=sh&command=-c&command=exit+3&input=1&output=1&error=1');
    expect(seen.headers['x-stream-protocol-version']).toBe('v4.channel.k8s.io, channel.k8s.io');
  });

  it('translates a WebSocket exec to SPDY at the kubelet', async () => {
    kubelet.token = 'remote-ws';
    runtime.expect('exec', 'remote-ws', ['error', 'stdin', 'stdout'], async (streams, session) => {
      await session.ended('stdin');
      streams.get('stdout')!.write(Buffer.from(receivedText(streams.get('stdin')).toUpperCase()));
      return 0;
    });
    const outcome = await upgradeRequest(
      target(),
      'GET',
      `${PODS}/remote-web/exec?container=app&command=cat&stdin=true&stdout=true`,
      webSocketHeaders(['v5.channel.k8s.io'], 'admin-token'),
    );
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    const ws = webSocketClient(outcome.socket, outcome.head);
    ws.send(Buffer.from([0, ...Buffer.from('over tls')]));
    ws.send(Buffer.from([255, 0]));
    await ws.ended;
    const byChannel = (channel: number) => Buffer.concat(ws.messages.filter((m) => m.data[0] === channel).map((m) => m.data.subarray(1))).toString();
    expect(byChannel(1)).toBe('OVER TLS');
    expect(JSON.parse(byChannel(3))).toMatchObject({ status: 'Success' });
    expect(kubelet.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: `/exec/default/remote-web/${uid}/app`,
      headers: { 'x-stream-protocol-version': 'v4.channel.k8s.io' },
    });
  });

  it('tunnels a WebSocket port-forward to the kubelet', async () => {
    kubelet.token = 'remote-pf';
    runtime.expect('portforward', 'remote-pf', ['error:0', 'data:0'], async (streams, session) => {
      await session.ended('data');
      streams.get('data:0')!.write(Buffer.from(`echo:${receivedText(streams.get('data:0'))}`));
      return 0;
    });
    const outcome = await upgradeRequest(
      target(),
      'GET',
      `${PODS}/remote-web/portforward?ports=80`,
      webSocketHeaders(['SPDY/3.1+portforward.k8s.io'], 'admin-token'),
    );
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    const session = new SpdySession(tunnelledSocket(webSocketClient(outcome.socket, outcome.head)));
    expect(await forwardPing(session)).toBe('echo:ping');
    session.close();
    const seen = kubelet.requests.at(-1)!;
    expect(seen).toMatchObject({ method: 'POST', path: `/portForward/default/remote-web/${uid}` });
    expect(seen.query.getAll('port')).toEqual(['80']);
  });

  it("answers the kubelet's refusal to upgrade as a Status", async () => {
    kubelet.token = 'nobody-expects-this';
    const outcome = await upgradeRequest(target(), 'POST', `${PODS}/remote-web/attach?container=app&stdout=true`, {
      ...ADMIN,
      upgrade: 'SPDY/3.1',
      'x-stream-protocol-version': 'v4.channel.k8s.io',
    });
    expect(outcome).toMatchObject({
      upgraded: false,
      status: 404,
      body: { kind: 'Status', message: 'unable to upgrade connection: invalid or expired token' },
    });
  });
});
