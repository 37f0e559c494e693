import { RESOURCES, type Event, type KubeObject } from '@skiff/api';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClient, type SkiffClient } from './client.js';
import { createLoopbackClient } from './connect.js';
import { EventRecorderImpl } from './recorder.js';
import { MemoryApiHandler } from './test-support/memory-api.js';
import { recordingLogger } from '@skiff/kernel';
import { LoopbackTransport } from './transport/loopback.js';

let handler: MemoryApiHandler;
let client: SkiffClient;

beforeEach(() => {
  handler = new MemoryApiHandler();
  client = createLoopbackClient(handler, { username: 'system:kube-controller-manager', groups: [] });
});

afterEach(() => {
  vi.useRealTimers();
});

const web: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shop', uid: 'u-1', resourceVersion: '7' } };

async function events(namespace: string): Promise<Event[]> {
  return (await client.list<Event>(RESOURCES.events, namespace)).items;
}

describe('EventRecorderImpl', () => {
  it('creates a core/v1 Event describing the object', async () => {
    const recorder = new EventRecorderImpl(client, { component: 'kubelet', host: 'node-1' });
    recorder.event(web, 'Normal', 'Pulled', 'Container image "nginx" already present on machine');
    await recorder.flush();

    const [event] = await events('shop');
    expect(event.metadata.name).toMatch(/^web\.[0-9a-f]+$/);
    expect(event).toMatchObject({
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'web', namespace: 'shop', uid: 'u-1', resourceVersion: '7' },
      reason: 'Pulled',
      message: 'Container image "nginx" already present on machine',
      type: 'Normal',
      source: { component: 'kubelet', host: 'node-1' },
      count: 1,
      reportingComponent: 'kubelet',
      reportingInstance: 'node-1',
    });
    expect(event.firstTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(event.lastTimestamp).toBe(event.firstTimestamp);
  });

  it('folds repeats into one Event, writing a burst at once', async () => {
    const recorder = new EventRecorderImpl(client, { component: 'scheduler' });
    for (let i = 0; i < 10; i++) recorder.event(web, 'Warning', 'FailedScheduling', '0/3 nodes are available');
    await recorder.flush();
    recorder.event(web, 'Warning', 'FailedScheduling', '0/3 nodes are available');
    await recorder.flush();

    const all = await events('shop');
    expect(all).toHaveLength(1);
    expect(all[0].count).toBe(11);
    const writes = handler.requests.filter((r) => r.method !== 'GET');
    expect(writes.map((r) => [r.method, r.path])).toEqual([
      ['POST', '/api/v1/namespaces/shop/events'],
      ['PATCH', `/api/v1/namespaces/shop/events/${all[0].metadata.name}`],
    ]);
    expect(writes[0].body).toMatchObject({ count: 10 });
    expect(writes[1].headers['content-type']).toBe('application/merge-patch+json');
    expect(writes[1].body).toEqual({ count: 11, lastTimestamp: expect.any(String) });
  });

  it('keeps different reasons or messages apart', async () => {
    const recorder = new EventRecorderImpl(client, { component: 'c' });
    recorder.event(web, 'Normal', 'Started', 'one');
    recorder.event(web, 'Normal', 'Started', 'two');
    recorder.event(web, 'Normal', 'Killing', 'one');
    await recorder.flush();
    expect(await events('shop')).toHaveLength(3);
  });

  it('starts a new Event when a repeat comes more than ten minutes later', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const recorder = new EventRecorderImpl(client, { component: 'c' });
    recorder.event(web, 'Normal', 'Synced', 'ok');
    await recorder.flush();
    vi.setSystemTime(Date.now() + 11 * 60_000);
    recorder.event(web, 'Normal', 'Synced', 'ok');
    await recorder.flush();
    expect((await events('shop')).map((e) => e.count)).toEqual([1, 1]);
  });

  it('records events of cluster-scoped objects in the default namespace', async () => {
    const recorder = new EventRecorderImpl(client, { component: 'node-controller' });
    recorder.event({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1', uid: 'n' } }, 'Normal', 'NodeReady', 'ready');
    await recorder.flush();
    const [event] = await events('default');
    expect(event.involvedObject).toEqual({ apiVersion: 'v1', kind: 'Node', name: 'node-1', uid: 'n' });
  });

  it('re-creates the Event if it was deleted meanwhile', async () => {
    const recorder = new EventRecorderImpl(client, { component: 'c' });
    recorder.event(web, 'Normal', 'Synced', 'ok');
    await recorder.flush();
    const [first] = await events('shop');
    await client.delete(RESOURCES.events, first.metadata.name as string, 'shop');
    recorder.event(web, 'Normal', 'Synced', 'ok');
    await recorder.flush();
    const [again] = await events('shop');
    expect(again).toMatchObject({ metadata: { name: first.metadata.name }, count: 2, firstTimestamp: first.firstTimestamp });
  });

  it('never throws to the caller; failures are logged', async () => {
    const logger = recordingLogger();
    const rejected = createClient(new LoopbackTransport(handler, 'bad-token'));
    const recorder = new EventRecorderImpl(rejected, { component: 'c', logger });
    expect(() => recorder.event(web, 'Warning', 'Failed', 'x')).not.toThrow();
    await recorder.flush();
    expect(logger.records).toHaveLength(1);
    expect(logger.records[0]).toMatchObject({
      level: 'warn',
      message: 'could not record event',
      fields: { component: 'c', reason: 'Failed', err: expect.objectContaining({ status: 401 }) },
    });
  });
});
