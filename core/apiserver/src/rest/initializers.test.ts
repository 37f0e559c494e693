import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin } from '@skiff/kernel';
import { pod, startTestServer, type TestServer } from '../test-support/cluster.js';

const initializerPlugin = definePlugin({
  name: 'test-initializers',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.initializers.tap('test-initializers', (registry) => {
      registry.register({
        name: 'image.example.com',
        group: '',
        resource: 'pods',
        initialize(object) {
          const containers = (object.spec as { containers: { image?: string }[] }).containers;
          for (const container of containers) if (container.image && !container.image.includes(':')) container.image += ':latest';
        },
      });
      registry.register({ name: 'approval.example.com', group: '', resource: 'pods' });
      registry.register({
        name: 'label.example.com',
        group: '',
        resource: 'pods',
        initialize(object) {
          object.metadata.labels = { ...object.metadata.labels, initialized: 'true' };
        },
      });
      registry.register({
        name: 'stamp.example.com',
        group: '',
        resource: 'configmaps',
        initialize: (object) => void ((object as { data?: object }).data = { stamped: 'yes' }),
      });
    });
  },
});

let server: TestServer;
const PODS = '/api/v1/namespaces/default/pods';

beforeAll(async () => {
  server = await startTestServer({ plugins: [initializerPlugin] });
});
afterAll(async () => {
  await server?.stop();
});

describe('initializers', () => {
  it('runs in-process initializers on create and removes the entry when none is left', async () => {
    const created = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'stamped' } } });
    expect(created.json.data).toEqual({ stamped: 'yes' });
    expect(created.json.metadata.initializers).toBeUndefined();
    expect((await server.request('GET', '/api/v1/namespaces/default/configmaps/stamped')).status).toBe(200);
  });

  it('hides an object with a pending initializer until an update clears it, then runs the rest', async () => {
    const watch = server.watch(`${PODS}?watch=true&resourceVersion=${server.store.revision()}`);
    const created = await server.request('POST', PODS, { body: pod('pending') });
    expect(created.status).toBe(201);
    expect(created.json.spec.containers[0].image).toBe('nginx:latest');
    expect(created.json.metadata.initializers).toEqual({ pending: [{ name: 'approval.example.com' }, { name: 'label.example.com' }] });

    expect((await server.request('GET', `${PODS}/pending`)).status).toBe(404);
    expect((await server.request('GET', PODS)).json.items).toEqual([]);
    const hidden = await server.request('GET', `${PODS}/pending?includeUninitialized=true`);
    expect(hidden.status).toBe(200);
    expect((await server.request('GET', `${PODS}?includeUninitialized=true`)).json.items).toHaveLength(1);

    const approved = { ...hidden.json, metadata: { ...hidden.json.metadata, initializers: { pending: [{ name: 'label.example.com' }] } } };
    const updated = await server.request('PUT', `${PODS}/pending`, { body: approved });
    expect(updated.status).toBe(200);
    expect(updated.json.metadata.initializers).toBeUndefined();
    expect(updated.json.metadata.labels).toEqual({ initialized: 'true' });

    const visible = await server.request('GET', `${PODS}/pending`);
    expect(visible.status).toBe(200);
    const added = await watch.next();
    expect(added).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'pending', labels: { initialized: 'true' } } } });
    watch.close();
  });

  it('shows uninitialized objects to watchers that ask for them', async () => {
    const watch = server.watch(`${PODS}?watch=true&includeUninitialized=true&resourceVersion=${server.store.revision()}`);
    await watch.response;
    await server.request('POST', PODS, { body: pod('seen-early') });
    expect(await watch.next()).toMatchObject({
      type: 'ADDED',
      object: { metadata: { name: 'seen-early', initializers: { pending: [{ name: 'approval.example.com' }, { name: 'label.example.com' }] } } },
    });
    watch.close();
  });
});
