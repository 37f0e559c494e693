import { isApiError, RESOURCES, type Namespace, type ServiceAccount } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import serviceAccountController from './index.js';

async function find(client: ApiClient, namespace: string, name: string): Promise<ServiceAccount | undefined> {
  try {
    return await client.get<ServiceAccount>(RESOURCES.serviceaccounts, name, namespace);
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

async function createNamespace(client: ApiClient, name: string, finalizers?: string[]): Promise<void> {
  await client.create<Namespace>(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(finalizers && { finalizers }) } });
}

describe('serviceaccount controller against a real API server', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane([[serviceAccountController, { serviceAccounts: ['default', 'builder'] }]]);
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('gives the system namespaces their accounts', async () => {
    for (const namespace of ['default', 'kube-system', 'kube-public', 'kube-node-lease'])
      await waitFor(`default in ${namespace}`, () => find(plane.client, namespace, 'default'));
  });

  it('creates every named account in a new namespace, with no token secrets', async () => {
    await createNamespace(plane.client, 'team-a');
    const created = await waitFor('default and builder in team-a', async () => {
      const [account, builder] = await Promise.all([find(plane.client, 'team-a', 'default'), find(plane.client, 'team-a', 'builder')]);
      return account && builder && account;
    });
    expect(created.secrets).toBeUndefined();
    expect((await plane.client.list(RESOURCES.serviceaccounts, 'team-a')).items.map((sa) => sa.metadata.name).sort()).toEqual(['builder', 'default']);
  });

  it('recreates a deleted account (with a new uid) and leaves other accounts alone', async () => {
    await createNamespace(plane.client, 'team-b');
    const first = await waitFor('default in team-b', () => find(plane.client, 'team-b', 'default'));
    await plane.client.create<ServiceAccount>(
      RESOURCES.serviceaccounts,
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'extra', namespace: 'team-b' } },
      'team-b',
    );
    await plane.client.delete(RESOURCES.serviceaccounts, 'default', 'team-b');
    await plane.client.delete(RESOURCES.serviceaccounts, 'extra', 'team-b');
    const again = await waitFor('default recreated', async () => {
      const account = await find(plane.client, 'team-b', 'default');
      return account?.metadata.uid !== first.metadata.uid && account;
    });
    expect(again.metadata.uid).toBeDefined();
    expect(await find(plane.client, 'team-b', 'extra')).toBeUndefined();
  });

  it('creates nothing in a namespace being deleted', async () => {
    await createNamespace(plane.client, 'leaving', ['example.com/hold']);
    await createNamespace(plane.client, 'marker');
    await waitFor('default in leaving', () => find(plane.client, 'leaving', 'default'));
    const marker = await waitFor('default in marker', () => find(plane.client, 'marker', 'default'));
    await plane.client.delete(RESOURCES.namespaces, 'leaving');
    await waitFor('leaving is terminating', async () => (await plane.client.get<Namespace>(RESOURCES.namespaces, 'leaving')).status?.phase === 'Terminating');
    // Both deletions reach the controller through one watch, in this order: once marker has its account back, leaving was seen.
    await plane.client.delete(RESOURCES.serviceaccounts, 'default', 'leaving');
    await plane.client.delete(RESOURCES.serviceaccounts, 'default', 'marker');
    await waitFor('default recreated in marker', async () => {
      const account = await find(plane.client, 'marker', 'default');
      return account && account.metadata.uid !== marker.metadata.uid;
    });
    expect(await find(plane.client, 'leaving', 'default')).toBeUndefined();
  });
});
