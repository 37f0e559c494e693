import { RESOURCES, type Pod } from '@skiff/api';
import { waitFor } from '@skiff/kernel';
import { MessageChannel, Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../client.js';
import { createLoopbackClient } from '../connect.js';
import { MemoryApiHandler } from '../test-support/memory-api.js';
import { PortTransport, servePortTransport } from './port.js';

const admin = { username: 'admin', groups: ['system:masters'] };
const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
});

const closers: (() => void)[] = [];
afterEach(() => closers.splice(0).forEach((close) => close()));

function connected() {
  const handler = new MemoryApiHandler();
  const channel = new MessageChannel();
  const stop = servePortTransport(channel.port1, handler, handler.issueLoopbackToken(admin));
  const client = createClient(new PortTransport(channel.port2));
  closers.push(() => {
    stop();
    channel.port1.close();
    channel.port2.close();
  });
  return { handler, client };
}

describe('the message-port transport', () => {
  it('carries requests, answers and errors through the port, authenticated as the served user', async () => {
    const { handler, client } = connected();
    const created = await client.create(RESOURCES.pods, pod('web'));
    expect(created.metadata.resourceVersion).toBe('1');
    expect(handler.requests.at(-1)!.headers.authorization).toMatch(/^Bearer /);
    expect((await client.get<Pod>(RESOURCES.pods, 'web', 'default')).spec.containers[0]!.image).toBe('nginx');
    await expect(client.get(RESOURCES.pods, 'missing', 'default')).rejects.toMatchObject({ status: 404, reason: 'NotFound' });
  });

  it('streams watch events in order and stops the server side when the consumer leaves', async () => {
    const { handler, client } = connected();
    const abort = new AbortController();
    const seen: string[] = [];
    const watching = (async () => {
      for await (const event of client.watch<Pod>(RESOURCES.pods, 'default', { resourceVersion: '0', signal: abort.signal })) {
        seen.push(`${event.type} ${(event.object as Pod).metadata.name}`);
        if (seen.length === 3) break;
      }
    })();
    await waitFor('the watch to open', () => handler.openWatches() === 1);
    for (const name of ['a', 'b']) await client.create(RESOURCES.pods, pod(name));
    await client.delete(RESOURCES.pods, 'a', 'default');
    await watching;
    expect(seen).toEqual(['ADDED a', 'ADDED b', 'DELETED a']);
    await waitFor('the server-side watch to end', () => handler.openWatches() === 0);
  });

  it('works across threads: a worker thread lists through the port', async () => {
    const handler = new MemoryApiHandler();
    await createLoopbackClient(handler, admin).create(RESOURCES.pods, pod('seen-from-worker'));
    const channel = new MessageChannel();
    const stop = servePortTransport(channel.port1, handler, handler.issueLoopbackToken(admin));
    // The worker posts requests in the port's own wire format, as PortTransport does, and reports the answer.
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const port = workerData.port;
       port.on('message', (m) => { if (m.type === 'response') { parentPort.postMessage(m.body.items.map((p) => p.metadata.name)); port.close(); } });
       port.postMessage({ id: 1, type: 'request', request: { method: 'GET', path: '/api/v1/namespaces/default/pods', query: {}, headers: {} } });`,
      { eval: true, workerData: { port: channel.port2 }, transferList: [channel.port2] },
    );
    const names = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    expect(names).toEqual(['seen-from-worker']);
    stop();
    await worker.terminate();
  });
});
