import { request as httpsRequest, Agent } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAIN_STAGE, definePlugin, waitFor } from '@skiff/kernel';
import { startTestServer, type TestServer } from '../test-support/cluster.js';

const MAX_CONNECTIONS = 20;

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
  server = await startTestServer({ plugins: [anonymous], apiServerOptions: { maxConnections: MAX_CONNECTIONS } });
});
afterAll(async () => {
  await server?.stop();
});

/** A keep-alive connection of its own that has made one GET, with or without the admin token. */
async function keptConnection(token: string | undefined): Promise<{ agent: Agent; socket: Socket }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: server.info.caPem });
  const status = await new Promise<number>((resolve, reject) => {
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    httpsRequest(`${server.info.url}/api/v1/namespaces`, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    })
      .on('error', reject)
      .end();
  });
  expect(status).toBe(200);
  await waitFor('the socket to be free', () => Object.values(agent.freeSockets).flat().length === 1);
  return { agent, socket: Object.values(agent.freeSockets).flat()[0]! };
}

/** A TCP connection that never starts TLS, once the server has accepted it. */
async function rawConnection(): Promise<Socket> {
  const { port } = new URL(server.info.url);
  const socket = netConnect({ host: '127.0.0.1', port: Number(port) });
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  // The server accepts in order; a pause keeps the order of acceptance that of connection.
  await new Promise((resolve) => setTimeout(resolve, 10));
  return socket;
}

describe('the connection limit', () => {
  it('closes the oldest connections that never authenticated, and never an authenticated one', async () => {
    const authenticated: { agent: Agent; socket: Socket }[] = [];
    const anonymousOnes: { agent: Agent; socket: Socket }[] = [];
    for (let i = 0; i < 5; i++) authenticated.push(await keptConnection('admin-token'));
    for (let i = 0; i < 5; i++) anonymousOnes.push(await keptConnection(undefined));
    const raw: Socket[] = [];
    for (let i = 0; i < 30; i++) raw.push(await rawConnection());

    // 40 connections for 20 slots: the 5 authenticated ones keep theirs; of the 35 others, the 15 newest stay.
    await waitFor('the anonymous connections to be closed', () => anonymousOnes.every(({ socket }) => socket.destroyed));
    await waitFor('the oldest raw connections to be closed', () => raw.slice(0, 15).every((socket) => socket.destroyed || socket.readableEnded));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(raw.slice(15).filter((socket) => socket.destroyed || socket.readableEnded)).toEqual([]);
    expect(authenticated.filter(({ socket }) => socket.destroyed)).toEqual([]);

    // With every other slot taken by an authenticated connection, the next raw connection is refused outright.
    for (let i = 0; i < 15; i++) authenticated.push(await keptConnection('admin-token'));
    const refused = await rawConnection();
    await waitFor('the connection past the limit to be refused', () => refused.destroyed || refused.readableEnded);
    expect(authenticated.filter(({ socket }) => socket.destroyed)).toEqual([]);

    for (const socket of [...raw, refused]) socket.destroy();
    for (const { agent } of [...authenticated, ...anonymousOnes]) agent.destroy();
  });
});
