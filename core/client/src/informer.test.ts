import { RESOURCES, type KubeObject, type Pod, type ResourceType } from '@skiff/api';
import { waitFor, type Informer } from '@skiff/kernel';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type SkiffClient } from './client.js';
import { createLoopbackClient } from './connect.js';
import { SharedInformerFactory, type SharedInformerFactoryOptions } from './factory.js';
import { serveHttps, type TestHttpsServer } from './test-support/https-server.js';
import { MemoryApiHandler } from './test-support/memory-api.js';
import { recordingLogger } from '@skiff/kernel';
import { createTestPki, type TestPki } from './test-support/tls.js';
import { HttpsTransport } from './transport/https.js';
import { objectKey } from './workqueue.js';

const admin = { username: 'admin', groups: ['system:masters'] };
const stops: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

function setup(options: SharedInformerFactoryOptions = {}, handler = new MemoryApiHandler(), client: SkiffClient = createLoopbackClient(handler, admin)) {
  const logger = recordingLogger();
  const factory = new SharedInformerFactory(client, { logger, resyncMs: 0, retry: { initialMs: 5, maxMs: 20 }, ...options });
  const controller = new AbortController();
  stops.push(async () => {
    controller.abort();
    await factory.stopped();
    client.close();
  });
  return { handler, client, logger, factory, signal: controller.signal, abort: () => controller.abort() };
}

function pod(name: string, namespace = 'default', spec: Partial<Pod['spec']> = {}): Pod {
  return { metadata: { name, namespace }, spec: { containers: [{ name: 'c' }], ...spec } };
}

/** What the handlers heard, as short lines: "add default/a@3", "update default/a@3→5", "delete default/b@7". */
function record<T extends KubeObject>(informer: Informer<T>): string[] {
  const heard: string[] = [];
  const at = (object: T) => `${objectKey(object)}@${object.metadata.resourceVersion}`;
  informer.addHandlers({
    add: (object) => heard.push(`add ${at(object)}`),
    update: (old, next) => heard.push(`update ${at(old)}→${next.metadata.resourceVersion}`),
    delete: (object) => heard.push(`delete ${at(object)}`),
  });
  return heard;
}

const watchRequests = (handler: MemoryApiHandler) => handler.requests.filter((r) => r.query.watch === 'true');
const listRequests = (handler: MemoryApiHandler) => handler.requests.filter((r) => r.method === 'GET' && r.query.watch !== 'true');

describe('SharedInformer', () => {
  it('lists in pages of 500, syncs, then watches from the list resourceVersion', async () => {
    const { handler, client, factory, signal } = setup();
    for (let i = 0; i < 1001; i++) await client.create(RESOURCES.pods, pod(`p${String(i).padStart(4, '0')}`));
    const informer = factory.informer<Pod>(RESOURCES.pods);
    const heard = record(informer);
    expect(informer.hasSynced()).toBe(false);

    factory.start(signal);
    await factory.waitForSync(signal);
    expect(informer.hasSynced()).toBe(true);
    expect(informer.list()).toHaveLength(1001);
    expect(heard).toHaveLength(1001);
    const lists = listRequests(handler);
    expect(lists.map((r) => [r.path, r.query.limit, Boolean(r.query.continue)])).toEqual([
      ['/api/v1/pods', '500', false],
      ['/api/v1/pods', '500', true],
      ['/api/v1/pods', '500', true],
    ]);

    await waitFor('the watch', () => handler.openWatches() === 1);
    const watch = watchRequests(handler)[0];
    expect(watch.query).toMatchObject({ resourceVersion: '1001', allowWatchBookmarks: 'true' });
    expect(Number(watch.query.timeoutSeconds)).toBeGreaterThanOrEqual(300);
    expect(Number(watch.query.timeoutSeconds)).toBeLessThan(600);

    heard.length = 0;
    const created = await client.create(RESOURCES.pods, pod('new'));
    await client.patch(RESOURCES.pods, 'new', { metadata: { labels: { a: 'b' } } }, { namespace: 'default' });
    await client.delete(RESOURCES.pods, 'p0000', 'default');
    await waitFor('three live events', () => heard.length === 3);
    expect(heard).toEqual(['add default/new@1002', 'update default/new@1002→1003', 'delete default/p0000@1004']);
    expect(informer.get('default/new')?.metadata.labels).toEqual({ a: 'b' });
    expect(informer.get('default/p0000')).toBeUndefined();
    expect(created.metadata.uid).toBe(informer.get('default/new')?.metadata.uid);
  });

  it.each(['event', 'status'] as const)('relists after a 410 (%s) and delivers only the differences', async (goneAs) => {
    const { handler, client, factory, signal } = setup();
    handler.goneAs = goneAs;
    for (const name of ['a', 'b', 'c']) await client.create(RESOURCES.pods, pod(name));
    const informer = factory.informer<Pod>(RESOURCES.pods, { namespace: 'default' });
    const heard = record(informer);
    factory.start(signal);
    await informer.waitForSync(signal);
    await waitFor('the watch', () => handler.openWatches() === 1);
    heard.length = 0;

    // The informer loses its watch; while it cannot watch, objects change and history is compacted.
    handler.refuseWatches = true;
    handler.closeWatches();
    await client.patch(RESOURCES.pods, 'a', { metadata: { labels: { changed: 'yes' } } }, { namespace: 'default' });
    await client.delete(RESOURCES.pods, 'b', 'default');
    await client.create(RESOURCES.pods, pod('d'));
    handler.compact();
    const listsBefore = listRequests(handler).length;
    handler.refuseWatches = false;

    await waitFor('the relist differences', () => heard.length === 3);
    expect(heard.sort()).toEqual(['add default/d@6', 'delete default/b@2', 'update default/a@1→4']);
    expect(listRequests(handler).length).toBe(listsBefore + 1);
    expect(
      informer
        .list('default')
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(['a', 'c', 'd']);
    await waitFor('a watch from the relist', () => watchRequests(handler).at(-1)?.query.resourceVersion === '6');
  });

  it('resumes from a bookmark without relisting, even after compaction', async () => {
    const { handler, client, factory, signal } = setup();
    await client.create(RESOURCES.pods, pod('mine', 'a'));
    const informer = factory.informer(RESOURCES.pods, { namespace: 'a' });
    factory.start(signal);
    await informer.waitForSync(signal);
    await waitFor('the watch', () => handler.openWatches() === 1);

    // Writes elsewhere move the revision on without any event for this informer; a bookmark tells it so.
    for (let i = 0; i < 3; i++) await client.create(RESOURCES.pods, pod(`other${i}`, 'b'));
    handler.bookmark();
    handler.closeWatches();
    await waitFor('the second watch', () => watchRequests(handler).length === 2);
    expect(watchRequests(handler)[1].query.resourceVersion).toBe('4');

    await waitFor('the second watch to be open', () => handler.openWatches() === 1);
    handler.compact();
    handler.closeWatches();
    await waitFor('the third watch', () => watchRequests(handler).length === 3 && handler.openWatches() === 1);
    expect(watchRequests(handler)[2].query.resourceVersion).toBe('4');
    expect(listRequests(handler)).toHaveLength(1);
  });

  it('resyncs by re-delivering every cached object as update(obj, obj)', async () => {
    const { client, factory, signal } = setup({ resyncMs: 10 });
    await client.create(RESOURCES.pods, pod('a'));
    await client.create(RESOURCES.pods, pod('b'));
    const informer = factory.informer<Pod>(RESOURCES.pods);
    const resynced = new Map<string, number>();
    informer.addHandlers({
      update: (old, next) => {
        if (old === next) resynced.set(objectKey(next), (resynced.get(objectKey(next)) ?? 0) + 1);
      },
    });
    factory.start(signal);
    await waitFor('two resyncs of each object', () => (resynced.get('default/a') ?? 0) >= 2 && (resynced.get('default/b') ?? 0) >= 2);
  });

  it('keeps indexes current through adds, moves and deletes', async () => {
    const { client, factory, signal } = setup();
    await client.create(RESOURCES.pods, pod('web-1', 'default', { nodeName: 'n1' }));
    await client.create(RESOURCES.pods, pod('web-2', 'team', { nodeName: 'n1' }));
    await client.create(RESOURCES.pods, pod('pending'));
    const informer = factory.informer<Pod>(RESOURCES.pods);
    informer.addIndex('spec.nodeName', (p) => (p.spec.nodeName ? [p.spec.nodeName] : []));
    informer.addIndex('spec.nodeName', () => ['ignored']);
    factory.start(signal);
    await informer.waitForSync(signal);

    const names = (pods: Pod[]) => pods.map((p) => p.metadata.name).sort();
    expect(names(informer.byIndex('spec.nodeName', 'n1'))).toEqual(['web-1', 'web-2']);
    expect(informer.byIndex('spec.nodeName', 'ignored')).toEqual([]);
    expect(names(informer.list('team'))).toEqual(['web-2']);
    expect(names(informer.byIndex('namespace', 'default'))).toEqual(['pending', 'web-1']);

    const web1 = await client.get<Pod>(RESOURCES.pods, 'web-1', 'default');
    await client.update(RESOURCES.pods, { ...web1, spec: { ...web1.spec, nodeName: 'n2' } });
    await client.createSubresource(RESOURCES.pods, 'pending', 'default', 'binding', { target: { name: 'n2' } });
    await client.delete(RESOURCES.pods, 'web-2', 'team');
    await waitFor('two pods on n2', () => informer.byIndex('spec.nodeName', 'n2').length === 2);
    await waitFor('n1 to be empty', () => informer.byIndex('spec.nodeName', 'n1').length === 0);
    expect(informer.list('team')).toEqual([]);

    // An index added to a running informer starts out filled.
    informer.addIndex('metadata.name', (p) => [p.metadata.name ?? '']);
    expect(names(informer.byIndex('metadata.name', 'pending'))).toEqual(['pending']);
  });

  it('replays the cache as adds to handlers added after sync; a throwing handler is logged and harms no one', async () => {
    const { client, factory, logger, signal } = setup();
    await client.create(RESOURCES.nodes, { metadata: { name: 'n1' } });
    const informer = factory.informer(RESOURCES.nodes);
    informer.addHandlers({
      add: () => {
        throw new Error('handler bug');
      },
    });
    factory.start(signal);
    await informer.waitForSync(signal);
    const late = record(informer);
    expect(late).toEqual(['add n1@1']);

    await client.create(RESOURCES.nodes, { metadata: { name: 'n2' } });
    await waitFor('the live add', () => late.length === 2);
    const failures = logger.records.filter((r) => r.message === 'informer handler failed');
    expect(failures).toHaveLength(2);
    expect(failures[1].fields).toMatchObject({ handler: 'add', key: 'n2', informer: 'nodes' });
  });

  it('retries a failing list with backoff, and stops on abort', async () => {
    const widgets: ResourceType = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
    const { handler, factory, logger, signal, abort } = setup();
    const informer = factory.informer(widgets);
    factory.start(signal);
    await waitFor('three list attempts', () => listRequests(handler).length >= 3);
    expect(logger.records.find((r) => r.message === 'list failed; retrying')?.fields.err).toMatchObject({ status: 404 });

    const sync = informer.waitForSync(signal);
    abort();
    await expect(sync).rejects.toBeDefined();
    await factory.stopped();
    expect(informer.hasSynced()).toBe(false);
  });

  it('stops watching when the signal aborts', async () => {
    const { handler, factory, signal, abort } = setup();
    factory.informer(RESOURCES.pods);
    factory.informer(RESOURCES.nodes);
    factory.start(signal);
    await factory.waitForSync(signal);
    await waitFor('both watches', () => handler.openWatches() === 2);
    abort();
    await factory.stopped();
    await waitFor('the server to see both watches end', () => handler.openWatches() === 0);
  });
});

describe('SharedInformerFactory', () => {
  it('shares one informer per type and scope, and starts late ones at once', async () => {
    const { client, factory, signal } = setup();
    await client.create(RESOURCES.pods, pod('a'));
    expect(factory.informer(RESOURCES.pods)).toBe(factory.informer(RESOURCES.pods, {}));
    expect(factory.informer(RESOURCES.pods, { namespace: 'default' })).not.toBe(factory.informer(RESOURCES.pods));
    expect(factory.informer(RESOURCES.pods, { labelSelector: 'x=y' })).not.toBe(factory.informer(RESOURCES.pods, { fieldSelector: 'metadata.name=x' }));
    factory.start(signal);
    await factory.waitForSync(signal);

    const late = factory.informer<Pod>(RESOURCES.pods, { fieldSelector: 'metadata.name=a' });
    await late.waitForSync(signal);
    expect(late.list().map((p) => p.metadata.name)).toEqual(['a']);
  });
});

describe('SharedInformer over HTTPS', () => {
  let pki: TestPki;
  let server: TestHttpsServer;
  let handler: MemoryApiHandler;
  let token: string;

  beforeAll(async () => {
    pki = createTestPki();
    handler = new MemoryApiHandler();
    token = handler.issueLoopbackToken(admin);
    server = await serveHttps(handler, pki);
  });

  afterAll(async () => {
    await server.close();
  });

  it('syncs and follows changes through a real TLS connection', async () => {
    const client = createClient(new HttpsTransport({ server: server.url, caPem: pki.ca.certPem, token }));
    const { factory, signal } = setup({}, handler, client);
    await client.create(RESOURCES.pods, pod('a'));
    const informer = factory.informer<Pod>(RESOURCES.pods, { namespace: 'default' });
    const heard = record(informer);
    factory.start(signal);
    await informer.waitForSync(signal);
    await waitFor('the watch', () => handler.openWatches() === 1);

    await client.delete(RESOURCES.pods, 'a', 'default');
    handler.bookmark();
    await client.create(RESOURCES.pods, pod('b'));
    await waitFor('three events', () => heard.length === 3);
    expect(heard).toEqual(['add default/a@1', 'delete default/a@2', 'add default/b@3']);
  });
});
