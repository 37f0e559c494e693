import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin, waitFor, type AuditEvent } from '@skiff/kernel';
import { pod, startTestServer, type TestServer } from '../test-support/cluster.js';

let server: TestServer;
const audit: AuditEvent[] = [];

const auditRecorder = definePlugin({
  name: 'test-audit',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.audit.tap('test-audit', (event) => void audit.push(event));
  },
});

beforeAll(async () => {
  server = await startTestServer({ plugins: [auditRecorder] });
});
afterAll(async () => {
  await server?.stop();
});

const PODS = '/api/v1/namespaces/watch/pods';

beforeAll(async () => {
  await server.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'watch' } } });
});

describe('watch', () => {
  it('flushes headers before any event', async () => {
    const watch = server.watch(`${PODS}?watch=true&resourceVersion=${server.store.revision()}`);
    const response = await watch.response;
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('application/json');
    expect(response.headers['transfer-encoding']).toBe('chunked');
    expect(watch.events).toEqual([]);
    watch.close();
  });

  it('sends the current objects as ADDED without a resourceVersion, then live events', async () => {
    await server.request('POST', PODS, { body: pod('existing') });
    const watch = server.watch(`${PODS}?watch=1`);
    expect(await watch.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'existing' } } });
    const modified = await server.request('PATCH', `${PODS}/existing`, {
      body: { metadata: { labels: { x: 'y' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(await watch.next()).toMatchObject({ type: 'MODIFIED', object: { metadata: { labels: { x: 'y' } } } });
    const deleted = await server.request('DELETE', `${PODS}/existing`);
    const event = await watch.next();
    expect(event).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'existing' } } });
    // A deleted object carries the revision of its deletion, so a watcher resumes after it.
    expect(event.object.metadata.resourceVersion).toBe(deleted.json.metadata.resourceVersion);
    expect(Number(event.object.metadata.resourceVersion)).toBeGreaterThan(Number(modified.json.metadata.resourceVersion));
    watch.close();
  });

  it('replays the changes after a resourceVersion', async () => {
    const start = (await server.request('GET', PODS)).json.metadata.resourceVersion;
    await server.request('POST', PODS, { body: pod('r1') });
    await server.request('POST', PODS, { body: pod('r2') });
    const watch = server.watch(`${PODS}?watch=true&resourceVersion=${start}`);
    expect((await watch.next()).object.metadata.name).toBe('r1');
    expect((await watch.next()).object.metadata.name).toBe('r2');
    watch.close();
  });

  it('answers a compacted resourceVersion with an ERROR event carrying a 410 Expired Status', async () => {
    await server.request('POST', PODS, { body: pod('old') });
    const revision = server.store.revision();
    await server.request('POST', PODS, { body: pod('newer') });
    await server.store.compact(server.store.revision());
    const watch = server.watch(`${PODS}?watch=true&resourceVersion=${revision - 1}`);
    const event = await watch.next();
    expect(event).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    await watch.ended;
  });

  it('turns selector transitions into ADDED and DELETED', async () => {
    await server.request('POST', PODS, { body: pod('moving', { metadata: { labels: { role: 'blue' } } }) });
    const watch = server.watch(`${PODS}?watch=true&labelSelector=role%3Dgreen&resourceVersion=${server.store.revision()}`);
    await watch.response;
    await server.request('PATCH', `${PODS}/moving`, { body: { metadata: { labels: { role: 'green' } } }, contentType: 'application/merge-patch+json' });
    expect(await watch.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'moving', labels: { role: 'green' } } } });
    await server.request('PATCH', `${PODS}/moving`, { body: { metadata: { annotations: { note: '1' } } }, contentType: 'application/merge-patch+json' });
    expect(await watch.next()).toMatchObject({ type: 'MODIFIED' });
    await server.request('PATCH', `${PODS}/moving`, { body: { metadata: { labels: { role: 'red' } } }, contentType: 'application/merge-patch+json' });
    expect(await watch.next()).toMatchObject({ type: 'DELETED', object: { metadata: { labels: { role: 'red' } } } });
    await server.request('POST', PODS, { body: pod('unrelated', { metadata: { labels: { role: 'blue' } } }) });
    await server.request('PATCH', `${PODS}/moving`, { body: { metadata: { labels: { role: 'green' } } }, contentType: 'application/merge-patch+json' });
    expect(await watch.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'moving' } } });
    watch.close();
  });

  it('watches one object by field selector, like kubectl get -w and informers', async () => {
    await server.request('POST', PODS, { body: pod('single') });
    const list = (await server.request('GET', `${PODS}?fieldSelector=metadata.name%3Dsingle&limit=500&resourceVersion=0`)).json;
    const watch = server.watch(
      `${PODS}?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dsingle&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=300&watch=true`,
    );
    await server.request('POST', PODS, { body: pod('other-one') });
    await server.request('PATCH', `${PODS}/single`, { body: { metadata: { labels: { seen: 'yes' } } }, contentType: 'application/merge-patch+json' });
    const event = await watch.next((candidate) => candidate.type !== 'BOOKMARK');
    expect(event).toMatchObject({ type: 'MODIFIED', object: { metadata: { name: 'single', labels: { seen: 'yes' } } } });
    watch.close();
  });

  it('sends BOOKMARK events when asked', async () => {
    const watch = server.watch(`${PODS}?watch=true&allowWatchBookmarks=true&resourceVersion=${server.store.revision()}`);
    const bookmark = await watch.next((event) => event.type === 'BOOKMARK');
    expect(bookmark.object).toMatchObject({ kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: String(server.store.revision()) } });
    watch.close();
  });

  it('loses no event while bookmarks fall due between events', async () => {
    const watch = server.watch(`${PODS}?watch=true&allowWatchBookmarks=true&labelSelector=burst%3Dyes&resourceVersion=${server.store.revision()}`);
    await watch.response;
    const names = Array.from({ length: 40 }, (_, i) => `burst-${i}`);
    for (const name of names) {
      await server.request('POST', PODS, { body: pod(name, { metadata: { labels: { burst: 'yes' } } }) });
      await new Promise((r) => setTimeout(r, 10));
    }
    await watch.next((event) => event.type === 'ADDED' && event.object.metadata.name === 'burst-39');
    const added = watch.events.filter((event) => event.type === 'ADDED').map((event) => event.object.metadata.name);
    expect(added).toEqual(names);
    // A bookmark did fall due in the middle of the burst (40 writes take longer than the 200 ms interval).
    const types = watch.events.map((event) => event.type);
    expect(types.slice(types.indexOf('ADDED'), types.lastIndexOf('ADDED'))).toContain('BOOKMARK');
    watch.close();
  });

  it('ends the stream after timeoutSeconds', async () => {
    const started = Date.now();
    const watch = server.watch(`${PODS}?watch=true&timeoutSeconds=1&resourceVersion=${server.store.revision()}`);
    await watch.ended;
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it("stays open when timeoutSeconds is past setTimeout's limit of 2^31-1 ms", async () => {
    const watch = server.watch(`${PODS}?watch=true&timeoutSeconds=3000000&resourceVersion=${server.store.revision()}`);
    expect((await watch.response).statusCode).toBe(200);
    const endedEarly = await Promise.race([watch.ended.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2_000))]);
    expect(endedEarly).toBe(false);
    await server.request('POST', PODS, { body: pod('long-timeout') });
    expect(await watch.next((event) => event.object.metadata.name === 'long-timeout')).toMatchObject({ type: 'ADDED' });
    watch.close();
  });

  it('wraps each event in a one-row Table when kubectl asks for one', async () => {
    const watch = server.watch(`${PODS}?watch=true&fieldSelector=metadata.name%3Dr1`, {
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json' },
    });
    const event = await watch.next();
    expect(event.type).toBe('ADDED');
    expect(event.object).toMatchObject({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      columnDefinitions: [{ name: 'Name' }, { name: 'Status' }, { name: 'Node' }],
    });
    expect(event.object.rows).toEqual([{ cells: ['r1', 'Pending', '<none>'], object: expect.objectContaining({ kind: 'PartialObjectMetadata' }) }]);
    watch.close();
  });

  it('rejects a bad resourceVersion with 400 before streaming', async () => {
    const response = await server.request('GET', `${PODS}?watch=true&resourceVersion=abc`);
    expect(response.status).toBe(400);
  });

  it('ends the watch on the server when the client goes away', async () => {
    const watch = server.watch(`${PODS}?watch=true&labelSelector=goes%3Daway&resourceVersion=${server.store.revision()}`);
    await watch.response;
    const isThisWatch = (event: AuditEvent) => event.verb === 'watch' && event.requestURI.includes('goes%3Daway');
    expect(audit.filter(isThisWatch).map((event) => event.stage)).toEqual(['RequestReceived']);
    watch.close();
    // The audit ResponseComplete of a watch is recorded when its stream ends.
    await waitFor('the ResponseComplete audit event', () => audit.some((event) => isThisWatch(event) && event.stage === 'ResponseComplete'));
  });
});
