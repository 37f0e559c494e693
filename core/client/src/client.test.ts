import { ApiError, RESOURCES, type KubeObject, type Pod } from '@skiff/api';
import { waitFor, type WatchEvent } from '@skiff/kernel';
import { beforeEach, describe, expect, it } from 'vitest';
import { createLoopbackClient } from './connect.js';
import { ClientError } from './errors.js';
import { LoopbackTransport } from './transport/loopback.js';
import { createClient, type SkiffClient } from './client.js';
import { MemoryApiHandler } from './test-support/memory-api.js';

const admin = { username: 'admin', groups: ['system:masters'] };

function pod(name: string, namespace = 'default', extra: Partial<Pod> = {}): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec: { containers: [{ name: 'c', image: 'nginx' }] }, ...extra };
}

let handler: MemoryApiHandler;
let client: SkiffClient;

beforeEach(() => {
  handler = new MemoryApiHandler();
  client = createLoopbackClient(handler, admin);
});

const lastRequest = () => handler.requests.at(-1)!;

describe('createClient over the loopback transport', () => {
  it('authenticates with the loopback token the handler issued', async () => {
    await client.create(RESOURCES.namespaces, { metadata: { name: 'team-a' } });
    expect(lastRequest().headers.authorization).toMatch(/^Bearer .+/);

    const stranger = createClient(new LoopbackTransport(handler, 'not-a-token'));
    await expect(stranger.get(RESOURCES.namespaces, 'team-a')).rejects.toMatchObject({ status: 401, reason: 'Unauthorized' });
  });

  it('creates, reads, lists and deletes on the right paths', async () => {
    const created = await client.create(RESOURCES.pods, pod('web'));
    expect(lastRequest()).toMatchObject({ method: 'POST', path: '/api/v1/namespaces/default/pods' });
    expect(created.metadata.resourceVersion).toBe('1');

    await client.create(RESOURCES.deployments, { metadata: { name: 'd' }, spec: {} }, 'team-a');
    expect(lastRequest().path).toBe('/apis/apps/v1/namespaces/team-a/deployments');

    expect((await client.get<Pod>(RESOURCES.pods, 'web', 'default')).spec.containers[0].image).toBe('nginx');
    expect(lastRequest()).toMatchObject({ method: 'GET', path: '/api/v1/namespaces/default/pods/web' });

    const list = await client.list(RESOURCES.pods, undefined, { labelSelector: 'app=web', fieldSelector: 'metadata.name=web', limit: 10 });
    expect(lastRequest()).toMatchObject({ path: '/api/v1/pods', query: { labelSelector: 'app=web', fieldSelector: 'metadata.name=web', limit: '10' } });
    expect(list.items).toHaveLength(0);
    expect((await client.list(RESOURCES.pods, 'default')).items.map((p) => p.metadata.name)).toEqual(['web']);

    await client.delete(RESOURCES.pods, 'web', 'default', { propagationPolicy: 'Foreground', preconditions: { resourceVersion: '1' } });
    expect(lastRequest()).toMatchObject({
      method: 'DELETE',
      path: '/api/v1/namespaces/default/pods/web',
      body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground', preconditions: { resourceVersion: '1' } },
    });
    await expect(client.get(RESOURCES.pods, 'web', 'default')).rejects.toMatchObject({ status: 404, reason: 'NotFound' });
  });

  it('turns error Statuses into ApiErrors', async () => {
    await client.create(RESOURCES.pods, pod('web'));
    const err = await client.create(RESOURCES.pods, pod('web')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 409, reason: 'AlreadyExists', code: 'SKIFF_ERR_API_ALREADY_EXISTS', message: 'pods "web" already exists' });
  });

  it('sends the resourceVersion on update, so a stale write is a Conflict', async () => {
    const first = await client.create(RESOURCES.pods, pod('web'));
    const updated = await client.update(RESOURCES.pods, { ...first, metadata: { ...first.metadata, labels: { v: '2' } } });
    expect(lastRequest()).toMatchObject({ method: 'PUT', path: '/api/v1/namespaces/default/pods/web' });
    expect(updated.metadata.labels).toEqual({ v: '2' });
    await expect(client.update(RESOURCES.pods, first)).rejects.toMatchObject({ status: 409, reason: 'Conflict' });
  });

  it('updates status on the status subresource', async () => {
    const created = await client.create(RESOURCES.pods, pod('web'));
    const updated = await client.updateStatus<Pod>(RESOURCES.pods, { ...created, status: { phase: 'Running' } });
    expect(lastRequest()).toMatchObject({ method: 'PUT', path: '/api/v1/namespaces/default/pods/web/status' });
    expect(updated.status?.phase).toBe('Running');
  });

  it('updates other subresources on their own path (namespaces/finalize)', async () => {
    const created = await client.create(RESOURCES.namespaces, { metadata: { name: 'team-a' }, spec: { finalizers: ['kubernetes'] } });
    await client.update(RESOURCES.namespaces, { ...created, spec: { finalizers: [] } }, { subresource: 'finalize' });
    expect(lastRequest()).toMatchObject({ method: 'PUT', path: '/api/v1/namespaces/team-a/finalize', body: { spec: { finalizers: [] } } });
  });

  it('reads a subresource on its own path (deployments/scale)', async () => {
    // This test server serves no subresource reads; the request must still go to the subresource's path.
    await expect(client.get(RESOURCES.deployments, 'web', 'default', { subresource: 'scale' })).rejects.toMatchObject({ status: 404 });
    expect(lastRequest()).toMatchObject({ method: 'GET', path: '/apis/apps/v1/namespaces/default/deployments/web/scale' });
  });

  it('deletes a collection with the selectors in the query and the options in the body', async () => {
    // This test server deletes only single objects; the request must still arrive as a deletecollection.
    const attempt = client.deleteCollection(RESOURCES.pods, 'team-a', { labelSelector: 'app=web', propagationPolicy: 'Background' });
    await expect(attempt).rejects.toMatchObject({ status: 404 });
    expect(lastRequest()).toMatchObject({
      method: 'DELETE',
      path: '/api/v1/namespaces/team-a/pods',
      query: { labelSelector: 'app=web' },
      body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' },
    });
    expect(lastRequest().query).not.toHaveProperty('fieldSelector');
  });

  it('refuses to update an object without a name', async () => {
    await expect(client.update(RESOURCES.pods, { metadata: {} })).rejects.toThrow('cannot update a pods without metadata.name');
  });

  it('labels each patch type with its content type and passes the field manager', async () => {
    await client.create(RESOURCES.pods, pod('web'));
    const patched = await client.patch(RESOURCES.pods, 'web', { metadata: { labels: { a: 'b' } } }, { namespace: 'default', fieldManager: 'me' });
    expect(patched.metadata.labels).toEqual({ a: 'b' });
    expect(lastRequest()).toMatchObject({
      method: 'PATCH',
      path: '/api/v1/namespaces/default/pods/web',
      query: { fieldManager: 'me' },
      headers: { 'content-type': 'application/merge-patch+json' },
    });

    // This test server understands only merge patches; the others must still arrive correctly labelled.
    const sent: [unknown, Parameters<SkiffClient['patch']>[3], string][] = [
      [{ spec: {} }, { namespace: 'default', patchType: 'strategic' }, 'application/strategic-merge-patch+json'],
      [[{ op: 'add', path: '/metadata/labels/x', value: 'y' }], { namespace: 'default' }, 'application/json-patch+json'],
      [{ metadata: { name: 'web' } }, { namespace: 'default', patchType: 'apply', fieldManager: 'skiff' }, 'application/apply-patch+yaml'],
    ];
    for (const [body, options, contentType] of sent) {
      await expect(client.patch(RESOURCES.pods, 'web', body, options)).rejects.toMatchObject({ status: 415 });
      expect(lastRequest().headers['content-type']).toBe(contentType);
      expect(lastRequest().body).toEqual(body);
    }

    const subresource = client.patch(RESOURCES.deployments, 'd', { spec: { replicas: 2 } }, { namespace: 'default', subresource: 'scale' });
    await expect(subresource).rejects.toMatchObject({ status: 404 });
    expect(lastRequest().path).toBe('/apis/apps/v1/namespaces/default/deployments/d/scale');
  });

  it('requires a field manager for server-side apply', async () => {
    const attempt = client.patch(RESOURCES.pods, 'web', { metadata: { name: 'web' } }, { namespace: 'default', patchType: 'apply' });
    await expect(attempt).rejects.toBeInstanceOf(ClientError);
    await expect(attempt).rejects.toMatchObject({ code: 'SKIFF_ERR_CLIENT_FIELD_MANAGER_REQUIRED' });
    expect(handler.requests).toHaveLength(0);
  });

  it('posts to subresources (pods/binding)', async () => {
    await client.create(RESOURCES.pods, pod('web'));
    const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'web' }, target: { kind: 'Node', name: 'node-1' } };
    const status = await client.createSubresource<{ status: string }>(RESOURCES.pods, 'web', 'default', 'binding', binding);
    expect(status.status).toBe('Success');
    expect(lastRequest()).toMatchObject({ method: 'POST', path: '/api/v1/namespaces/default/pods/web/binding' });
    expect((await client.get<Pod>(RESOURCES.pods, 'web', 'default')).spec.nodeName).toBe('node-1');
  });

  it('keeps caller and server objects apart, as a socket would', async () => {
    const mine = pod('web');
    const created = await client.create(RESOURCES.pods, mine);
    expect(mine.metadata.resourceVersion).toBeUndefined();
    created.metadata.labels = { edited: 'locally' };
    expect((await client.get(RESOURCES.pods, 'web', 'default')).metadata.labels).toBeUndefined();
  });
});

describe('watch', () => {
  it('streams events after a resourceVersion with the watch query, and ends on abort', async () => {
    await client.create(RESOURCES.pods, pod('a'));
    const controller = new AbortController();
    const events: WatchEvent<KubeObject>[] = [];
    const consumed = (async () => {
      for await (const event of client.watch(RESOURCES.pods, 'default', {
        resourceVersion: '1',
        allowWatchBookmarks: true,
        timeoutSeconds: 30,
        labelSelector: 'app=web',
        signal: controller.signal,
      })) {
        events.push(event);
      }
    })();
    await waitFor('the watch to open', () => handler.openWatches() === 1);
    expect(lastRequest().query).toEqual({ watch: 'true', resourceVersion: '1', allowWatchBookmarks: 'true', timeoutSeconds: '30', labelSelector: 'app=web' });

    await client.create(RESOURCES.pods, pod('b', 'default', { metadata: { name: 'b', namespace: 'default', labels: { app: 'web' } } }));
    await client.delete(RESOURCES.pods, 'b', 'default');
    handler.bookmark();
    await waitFor('three events', () => events.length === 3);
    expect(events.map((e) => [e.type, e.object.metadata.resourceVersion])).toEqual([
      ['ADDED', '2'],
      ['DELETED', '3'],
      ['BOOKMARK', '3'],
    ]);

    controller.abort();
    await consumed;
    await waitFor('the server to release the watch', () => handler.openWatches() === 0);
  });

  it('ends when the server closes the stream', async () => {
    const events: string[] = [];
    const consumed = (async () => {
      for await (const event of client.watch(RESOURCES.pods, undefined, {})) events.push(event.type);
    })();
    await waitFor('the watch to open', () => handler.openWatches() === 1);
    await client.create(RESOURCES.pods, pod('a'));
    await waitFor('the event', () => events.length === 1);
    handler.closeWatches();
    await consumed;
    expect(events).toEqual(['ADDED']);
  });

  it('releases the server watch when the consumer stops early', async () => {
    await client.create(RESOURCES.pods, pod('a'));
    await client.create(RESOURCES.pods, pod('b'));
    for await (const event of client.watch(RESOURCES.pods, 'default', { resourceVersion: '0' })) {
      expect(event.type).toBe('ADDED');
      break;
    }
    await waitFor('the server to release the watch', () => handler.openWatches() === 0);
  });

  it('yields nothing for an already aborted signal', async () => {
    const events = [];
    for await (const event of client.watch(RESOURCES.pods, 'default', { signal: AbortSignal.abort() })) events.push(event);
    expect(events).toEqual([]);
    expect(handler.requests).toHaveLength(0);
  });

  it('throws the ApiError a watch is refused with', async () => {
    const drain = async (resourceVersion: string) => {
      for await (const event of client.watch(RESOURCES.pods, 'default', { resourceVersion })) void event;
    };
    handler.goneAs = 'status';
    await client.create(RESOURCES.pods, pod('a'));
    await client.create(RESOURCES.pods, pod('b'));
    handler.compact();
    await expect(drain('1')).rejects.toMatchObject({ status: 410, reason: 'Expired' });

    handler.refuseWatches = true;
    await expect(drain('2')).rejects.toMatchObject({ status: 503, reason: 'ServiceUnavailable' });
  });
});
