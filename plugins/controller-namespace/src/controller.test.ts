import { isApiError, RESOURCES, type Deployment, type KubeObject, type Namespace, type NamespaceCondition, type Pod, type ResourceType } from '@skiff/api';
import { definePlugin, type ApiClient, type ResourceDefinition } from '@skiff/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import namespaceController from './index.js';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';

/** A namespaced kind served without `deletecollection`, added the way a plugin adds kinds. */
const WIDGETS: ResourceDefinition = {
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  resource: 'widgets',
  singular: 'widget',
  namespaced: true,
  verbs: ['create', 'delete', 'get', 'list', 'watch'],
};
const widgetType: ResourceType = { group: 'example.com', version: 'v1', kind: 'Widget', resource: 'widgets', namespaced: true };
const widgets = definePlugin({
  name: 'test-widgets',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.resources.tap('test-widgets', (registry) => registry.register(WIDGETS));
  },
});

const podSpec = { containers: [{ name: 'app', image: 'nginx:1.25' }] };

async function createNamespace(client: ApiClient, name: string, finalizers?: string[]): Promise<void> {
  await client.create<Namespace>(RESOURCES.namespaces, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name },
    ...(finalizers && { spec: { finalizers } }),
  });
}

async function createPod(client: ApiClient, namespace: string, name: string, finalizers?: string[]): Promise<Pod> {
  return client.create<Pod>(
    RESOURCES.pods,
    { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, ...(finalizers && { finalizers }) }, spec: podSpec },
    namespace,
  );
}

async function createDeployment(client: ApiClient, namespace: string, name: string): Promise<Deployment> {
  return client.create<Deployment>(
    RESOURCES.deployments,
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace },
      spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: podSpec } },
    },
    namespace,
  );
}

async function find<T extends KubeObject>(client: ApiClient, type: ResourceType, name: string, namespace?: string): Promise<T | undefined> {
  try {
    return await client.get<T>(type, name, namespace);
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

function condition(namespace: Namespace, type: string): NamespaceCondition | undefined {
  return namespace.status?.conditions?.find((candidate) => candidate.type === type);
}

describe('namespace controller against a real API server', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane([widgets, namespaceController]);
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('deletes everything in a namespace being deleted, then the namespace', async () => {
    const { client } = plane;
    await createNamespace(client, 'doomed');
    await createNamespace(client, 'bystander');
    await createPod(client, 'doomed', 'web');
    await createDeployment(client, 'doomed', 'api');
    await client.create(widgetType, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'gadget', namespace: 'doomed' } }, 'doomed');
    await createPod(client, 'bystander', 'web');

    await client.delete(RESOURCES.namespaces, 'doomed');
    await waitFor('the namespace to be removed', async () => !(await find(client, RESOURCES.namespaces, 'doomed')));

    expect((await client.list(RESOURCES.pods, 'doomed')).items).toEqual([]);
    expect((await client.list(RESOURCES.deployments, 'doomed')).items).toEqual([]);
    expect((await client.list(widgetType, 'doomed')).items).toEqual([]);
    expect(await find(client, RESOURCES.pods, 'web', 'bystander')).toBeDefined();
  });

  it('keeps a namespace Terminating while an object in it holds a finalizer, and says why', async () => {
    const { client } = plane;
    await createNamespace(client, 'held');
    await createPod(client, 'held', 'stubborn', ['example.com/hold']);
    await client.delete(RESOURCES.namespaces, 'held');

    const terminating = await waitFor('the namespace to report what remains', async () => {
      const namespace = await client.get<Namespace>(RESOURCES.namespaces, 'held');
      return condition(namespace, 'NamespaceFinalizersRemaining')?.status === 'True' && namespace;
    });
    expect(terminating.status?.phase).toBe('Terminating');
    expect(terminating.spec?.finalizers).toEqual(['kubernetes']);
    expect(condition(terminating, 'NamespaceContentRemaining')).toMatchObject({
      status: 'True',
      reason: 'SomeResourcesRemain',
      message: 'Some resources are remaining: pods. has 1 resource instances',
    });
    expect(condition(terminating, 'NamespaceFinalizersRemaining')).toMatchObject({
      reason: 'SomeFinalizersRemain',
      message: 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
    });
    expect(condition(terminating, 'NamespaceDeletionContentFailure')).toMatchObject({ status: 'False', reason: 'ContentDeleted' });
    expect((await client.get<Pod>(RESOURCES.pods, 'stubborn', 'held')).metadata.deletionTimestamp).toBeDefined();

    await client.patch(RESOURCES.pods, 'stubborn', { metadata: { finalizers: null } }, { namespace: 'held' });
    await waitFor('the namespace to be removed once its last pod is gone', async () => !(await find(client, RESOURCES.namespaces, 'held')));
  });

  it('removes only its own finalizer, leaving other finalizers to hold the namespace', async () => {
    const { client } = plane;
    await createNamespace(client, 'shared', ['example.com/other']);
    await createPod(client, 'shared', 'web');
    await client.delete(RESOURCES.namespaces, 'shared');

    const finalized = await waitFor('the kubernetes finalizer to be removed', async () => {
      const namespace = await client.get<Namespace>(RESOURCES.namespaces, 'shared');
      return !namespace.spec?.finalizers?.includes('kubernetes') && namespace;
    });
    expect(finalized.spec?.finalizers).toEqual(['example.com/other']);
    expect(finalized.status?.phase).toBe('Terminating');
    expect(await find(client, RESOURCES.pods, 'web', 'shared')).toBeUndefined();
  });

  it('leaves namespaces that are not being deleted alone', async () => {
    const { client } = plane;
    await createNamespace(client, 'alive');
    await createPod(client, 'alive', 'web');
    await createNamespace(client, 'trigger');
    await client.delete(RESOURCES.namespaces, 'trigger');
    await waitFor('the other namespace to be removed', async () => !(await find(client, RESOURCES.namespaces, 'trigger')));
    const alive = await client.get<Namespace>(RESOURCES.namespaces, 'alive');
    expect(alive.status).toEqual({ phase: 'Active' });
    expect(await find(client, RESOURCES.pods, 'web', 'alive')).toBeDefined();
  });
});
