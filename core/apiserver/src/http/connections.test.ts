import { execFile } from 'node:child_process';
import { request as httpsRequest, Agent } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAIN_STAGE, definePlugin, waitFor } from '@skiff/kernel';
import { pod, startTestServer, type TestServer } from '../test-support/cluster.js';
import { defaultMaxConnections } from './open-file-limit.js';

const MAX_CONNECTIONS = 1_000;
const TIMEOUT_MS = 1_500;
const IDLE_SOCKETS = 5_000;

/** Provides the admin token the way an authentication plugin does, so admin.kubeconfig carries it. */
const adminCredential = definePlugin({
  name: 'test-admin-credential',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.lifecycle('test-admin-credential', -250, { start: () => kernel.provide('adminCredential', { token: 'admin-token' }) });
  },
});

/** Requests without credentials are system:anonymous, as with @skiff/plugin-authn-anonymous. */
const anonymous = definePlugin({
  name: 'test-anonymous',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.authenticate.tap({ name: 'test-anonymous', stage: CHAIN_STAGE.ANONYMOUS }, (request) =>
      request.headers.authorization ? undefined : { user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } },
    );
  },
});

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    plugins: [adminCredential, anonymous],
    apiServerOptions: {
      maxConnections: MAX_CONNECTIONS,
      tlsHandshakeTimeoutMs: TIMEOUT_MS,
      requestHeadersTimeoutMs: TIMEOUT_MS,
      requestTimeoutMs: 2 * TIMEOUT_MS,
    },
  });
  await server.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'flood' } } });
});
afterAll(async () => {
  await server?.stop();
});

interface Answer {
  status: number;
  body: string;
  ms: number;
}

/** One request on a connection of its own (an agent per call), kept alive afterwards when `agent` says so. */
function get(path: string, options: { token?: string; agent?: Agent | false } = {}): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const req = httpsRequest(`${server.info.url}${path}`, { ca: server.info.caPem, agent: options.agent ?? false, headers, timeout: 15_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to GET ${path} within 15 s`)));
    req.on('error', reject);
    req.end();
  });
}

function kubectl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('kubectl', ['--kubeconfig', join(server.dataDir, 'admin.kubeconfig'), ...args], { timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A client socket that notes when it is closed and what the server sent on it. */
interface IdleSocket {
  socket: Socket;
  connected: Promise<boolean>;
  closed: boolean;
  received: string;
}

function openIdle(handshake: boolean): IdleSocket {
  const { port } = new URL(server.info.url);
  const socket = handshake
    ? tlsConnect({ host: '127.0.0.1', port: Number(port), ca: server.info.caPem, servername: 'localhost' })
    : netConnect({ host: '127.0.0.1', port: Number(port) });
  const idle: IdleSocket = {
    socket,
    closed: false,
    received: '',
    connected: new Promise((resolve) => {
      socket.once(handshake ? 'secureConnect' : 'connect', () => resolve(true));
      socket.once('close', () => resolve(false));
    }),
  };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (idle.received += chunk));
  socket.on('error', () => undefined);
  socket.on('close', () => (idle.closed = true));
  return idle;
}

describe('client connections', () => {
  it(`${IDLE_SOCKETS} idle sockets do not lock out authenticated clients, and close after their timeouts`, { timeout: 60_000 }, async () => {
    // Connections that exist before the flood: a watch and idle keep-alive ones, half authenticated, half anonymous.
    const watch = server.watch(`/api/v1/namespaces/flood/pods?watch=true&resourceVersion=${server.store.revision()}`);
    await watch.response;
    const agents = Array.from({ length: 40 }, () => new Agent({ keepAlive: true, ca: server.info.caPem, maxSockets: 1 }));
    const kept = await Promise.all(agents.map((agent, i) => get('/api/v1/namespaces/flood', { agent, token: i % 2 ? undefined : 'admin-token' })));
    expect(kept.map((answer) => answer.status)).toEqual(agents.map(() => 200));
    const keptSockets = agents.map((agent) => Object.values(agent.freeSockets).flat()[0]!);
    expect(keptSockets.every((socket) => !socket.destroyed)).toBe(true);

    // Most sockets never start TLS; every tenth finishes the handshake and sends nothing.
    const floodStarted = performance.now();
    const idle: IdleSocket[] = [];
    // In batches, so the kernel's accept queue never overflows (a dropped connection would not be the server's).
    for (let i = 0; i < IDLE_SOCKETS; i += 100) {
      const batch = Array.from({ length: 100 }, (_, j) => openIdle((i + j) % 10 === 0));
      idle.push(...batch);
      await Promise.all(batch.map((socket) => socket.connected));
    }

    const kubectlStarted = performance.now();
    const result = await kubectl(['get', 'namespace', 'flood', '-o', 'name']);
    const kubectlMs = performance.now() - kubectlStarted;
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('namespace/flood');
    const fresh = await get('/api/v1/namespaces/flood', { token: 'admin-token' });
    expect(fresh.status).toBe(200);

    // The oldest connections that never authenticated made room: the anonymous keep-alive ones among them.
    expect(keptSockets.filter((_, i) => i % 2 === 0).every((socket) => !socket.destroyed)).toBe(true);
    await waitFor('the anonymous keep-alive connections to be shed', () => keptSockets.filter((_, i) => i % 2 === 1).every((socket) => socket.destroyed));

    // Past the handshake and headers timeouts, every idle socket is gone; handshaken ones got a 408 Status.
    await waitFor('every idle socket to be closed', () => idle.every((socket) => socket.closed), { timeoutMs: 4 * TIMEOUT_MS + 5_000 });
    const allClosedMs = performance.now() - floodStarted;
    const timedOut = idle.filter((socket) => socket.received.startsWith('HTTP/1.1 408'));
    expect(timedOut.length).toBeGreaterThan(0);
    expect(JSON.parse(timedOut[0]!.received.slice(timedOut[0]!.received.indexOf('\r\n\r\n') + 4))).toMatchObject({
      kind: 'Status',
      code: 408,
      reason: 'Timeout',
    });

    // Authenticated connections outlive every timeout: the watch still streams, the idle keep-alive ones are open.
    await server.request('POST', '/api/v1/namespaces/flood/pods', { body: pod('after-flood') });
    expect(await watch.next((event) => event.object.metadata.name === 'after-flood')).toMatchObject({ type: 'ADDED' });
    expect(keptSockets.filter((_, i) => i % 2 === 0).every((socket) => !socket.destroyed)).toBe(true);
    console.info(
      `${IDLE_SOCKETS} idle sockets: kubectl answered in ${kubectlMs.toFixed(0)} ms, all idle sockets closed ${allClosedMs.toFixed(0)} ms after the flood began`,
    );
    watch.close();
    for (const agent of agents) agent.destroy();
  });

  it('answers a URL over the header limit with a 431 Status', async () => {
    const answer = await get(`/api/v1/namespaces/flood/pods?labelSelector=app%3D${'a'.repeat(20_000)}`, { token: 'admin-token' });
    expect(answer.status).toBe(431);
    expect(JSON.parse(answer.body)).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 431,
      reason: 'BadRequest',
      message: expect.stringContaining('16384 bytes'),
    });
  });

  it('answers a request whose body does not arrive in time with a 408 Status', async () => {
    const { port } = new URL(server.info.url);
    const socket = tlsConnect({ host: '127.0.0.1', port: Number(port), ca: server.info.caPem, servername: 'localhost' });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    socket.write(
      'POST /api/v1/namespaces/flood/configmaps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin-token\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
    );
    await new Promise((resolve) => socket.once('close', resolve));
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toMatchObject({
      kind: 'Status',
      code: 408,
      message: expect.stringContaining('3000 ms'),
    });
  });
});

describe('defaultMaxConnections', () => {
  it('keeps a quarter of the open-file limit, at least 512, for the rest of the process', () => {
    expect(defaultMaxConnections(20_000)).toBe(15_000);
    expect(defaultMaxConnections(1_024)).toBe(512);
    expect(defaultMaxConnections(256)).toBe(64);
    expect(defaultMaxConnections(1_048_576)).toBe(32_768);
    expect(defaultMaxConnections(Infinity)).toBe(32_768);
    expect(defaultMaxConnections(undefined)).toBe(1_024);
  });
});
