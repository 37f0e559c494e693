import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  isApiError,
  RESOURCES,
  type Deployment,
  type KubeObject,
  type OwnerReference,
  type Pod,
  type ReplicaSet,
  type ReplicationController,
  type ResourceType,
} from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import garbageCollector from './index.js';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';

const template = { metadata: { labels: { app: 'gc' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } };

function ownerRef(owner: KubeObject, kind: string, apiVersion = 'apps/v1'): OwnerReference {
  return { apiVersion, kind, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

async function createDeployment(client: ApiClient, name: string): Promise<Deployment> {
  return client.create<Deployment>(
    RESOURCES.deployments,
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: 'default' },
      spec: { replicas: 0, selector: { matchLabels: { app: 'gc' } }, template },
    },
    'default',
  );
}

async function createReplicaSet(client: ApiClient, name: string, owners: OwnerReference[]): Promise<ReplicaSet> {
  return client.create<ReplicaSet>(
    RESOURCES.replicasets,
    {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name, namespace: 'default', ownerReferences: owners },
      spec: { replicas: 0, selector: { matchLabels: { app: 'gc' } }, template },
    },
    'default',
  );
}

async function createPod(client: ApiClient, name: string, owners: OwnerReference[]): Promise<Pod> {
  return client.create<Pod>(
    RESOURCES.pods,
    { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', ownerReferences: owners }, spec: template.spec },
    'default',
  );
}

async function exists(client: ApiClient, type: ResourceType, name: string): Promise<boolean> {
  try {
    await client.get(type, name, 'default');
    return true;
  } catch (err) {
    if (isApiError(err, 'NotFound')) return false;
    throw err;
  }
}

describe('garbage collector against a real API server', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane([garbageCollector]);
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('deletes dependents in cascade after their owner is deleted in the background', async () => {
    const { client } = plane;
    const d = await createDeployment(client, 'cascade');
    const rs = await createReplicaSet(client, 'cascade-rs', [ownerRef(d, 'Deployment')]);
    await createPod(client, 'cascade-pod-1', [ownerRef(rs, 'ReplicaSet')]);
    await createPod(client, 'cascade-pod-2', [ownerRef(rs, 'ReplicaSet')]);

    await client.delete(RESOURCES.deployments, 'cascade', 'default', { propagationPolicy: 'Background' });
    await waitFor('the ReplicaSet to be collected', async () => !(await exists(client, RESOURCES.replicasets, 'cascade-rs')));
    await waitFor(
      'the pods to be collected',
      async () => !(await exists(client, RESOURCES.pods, 'cascade-pod-1')) && !(await exists(client, RESOURCES.pods, 'cascade-pod-2')),
    );
  });

  it('collects an object created with a reference to an owner that does not exist', async () => {
    const ghost = { metadata: { name: 'ghost', uid: '00000000-0000-0000-0000-000000000000' } };
    await createPod(plane.client, 'dangling', [ownerRef(ghost, 'ReplicaSet')]);
    await waitFor('the dangling pod to be collected', async () => !(await exists(plane.client, RESOURCES.pods, 'dangling')));
  });

  it('treats an owner recreated under the same name (another uid) as gone', async () => {
    const { client } = plane;
    const first = await createDeployment(client, 'reborn');
    await client.delete(RESOURCES.deployments, 'reborn', 'default');
    await createDeployment(client, 'reborn');
    await createReplicaSet(client, 'reborn-rs', [ownerRef(first, 'Deployment')]);
    await waitFor('the ReplicaSet of the first owner to be collected', async () => !(await exists(client, RESOURCES.replicasets, 'reborn-rs')));
  });

  it('keeps an object that still has an owner, dropping only the reference to the vanished one', async () => {
    const { client } = plane;
    const kept = await createDeployment(client, 'two-owners-kept');
    const gone = await createDeployment(client, 'two-owners-gone');
    await createPod(client, 'two-owners', [ownerRef(kept, 'Deployment'), { ...ownerRef(gone, 'Deployment'), controller: false }]);
    await client.delete(RESOURCES.deployments, 'two-owners-gone', 'default');
    const pod = await waitFor('the reference to the deleted owner to be removed', async () => {
      const current = await client.get<Pod>(RESOURCES.pods, 'two-owners', 'default');
      return current.metadata.ownerReferences?.length === 1 && current;
    });
    expect(pod.metadata.ownerReferences).toEqual([ownerRef(kept, 'Deployment')]);
  });

  it('orphans dependents when the owner is deleted with propagationPolicy Orphan', async () => {
    const { client } = plane;
    const d = await createDeployment(client, 'orphaning');
    await createReplicaSet(client, 'orphaning-rs', [ownerRef(d, 'Deployment')]);
    await waitFor('the ReplicaSet to be visible', () => exists(client, RESOURCES.replicasets, 'orphaning-rs'));
    await client.delete(RESOURCES.deployments, 'orphaning', 'default', { propagationPolicy: 'Orphan' });
    await waitFor('the owner to be deleted once its dependents are released', async () => !(await exists(client, RESOURCES.deployments, 'orphaning')));
    const rs = await client.get<ReplicaSet>(RESOURCES.replicasets, 'orphaning-rs', 'default');
    expect(rs.metadata.ownerReferences ?? []).toEqual([]);
  });

  it('deletes dependents first when the owner is deleted in the foreground', async () => {
    const { client } = plane;
    const d = await createDeployment(client, 'foreground');
    const rs = await createReplicaSet(client, 'foreground-rs', [ownerRef(d, 'Deployment')]);
    await createPod(client, 'foreground-pod', [ownerRef(rs, 'ReplicaSet')]);
    await waitFor('the pod to be visible', () => exists(client, RESOURCES.pods, 'foreground-pod'));

    const seen: string[] = [];
    const watching = new AbortController();
    const list = await client.list(RESOURCES.replicasets, 'default');
    const deletions = (async () => {
      for await (const event of client.watch(RESOURCES.deployments, 'default', { resourceVersion: list.metadata.resourceVersion, signal: watching.signal })) {
        if (event.type === 'DELETED' && (event.object as KubeObject).metadata.name === 'foreground') {
          seen.push(
            `deployment deleted; rs exists: ${await exists(client, RESOURCES.replicasets, 'foreground-rs')}; pod exists: ${await exists(client, RESOURCES.pods, 'foreground-pod')}`,
          );
        }
      }
    })().catch(() => undefined);

    await client.delete(RESOURCES.deployments, 'foreground', 'default', { propagationPolicy: 'Foreground' });
    await waitFor('the owner to be deleted after its dependents', () => seen.length === 1);
    watching.abort();
    await deletions;
    expect(seen).toEqual(['deployment deleted; rs exists: false; pod exists: false']);
  });

  it('keeps a ReplicationController deleted in the foreground until its pods are gone', async () => {
    const { client } = plane;
    const rc = await client.create<ReplicationController>(
      RESOURCES.replicationcontrollers,
      {
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: 'rc-owner', namespace: 'default' },
        spec: { replicas: 0, selector: { app: 'gc' }, template },
      },
      'default',
    );
    await createPod(client, 'rc-owned-1', [ownerRef(rc, 'ReplicationController', 'v1')]);
    await createPod(client, 'rc-owned-2', [ownerRef(rc, 'ReplicationController', 'v1')]);
    await waitFor('the pods to be visible', async () => (await exists(client, RESOURCES.pods, 'rc-owned-1')) && exists(client, RESOURCES.pods, 'rc-owned-2'));
    await client.delete(RESOURCES.replicationcontrollers, 'rc-owner', 'default', { propagationPolicy: 'Foreground', preconditions: { uid: rc.metadata.uid } });
    await waitFor('the ReplicationController to be deleted', async () => !(await exists(client, RESOURCES.replicationcontrollers, 'rc-owner')));
    expect(await exists(client, RESOURCES.pods, 'rc-owned-1')).toBe(false);
    expect(await exists(client, RESOURCES.pods, 'rc-owned-2')).toBe(false);
  });

  it('is not blocked by a cycle of blocking owner references when one of them is deleted in the foreground', async () => {
    const { client } = plane;
    const pods = [await createPod(client, 'circle-1', []), await createPod(client, 'circle-2', []), await createPod(client, 'circle-3', [])];
    // circle-1 is owned by circle-3, circle-2 by circle-1, circle-3 by circle-2: each blocks its owner's deletion.
    for (const [index, pod] of pods.entries()) {
      const owner = pods[(index + 2) % 3]!;
      await client.patch(
        RESOURCES.pods,
        pod.metadata.name!,
        { metadata: { ownerReferences: [ownerRef(owner, 'Pod', 'v1')] } },
        { namespace: 'default', patchType: 'strategic' },
      );
    }
    await client.delete(RESOURCES.pods, 'circle-1', 'default', { propagationPolicy: 'Foreground', preconditions: { uid: pods[0]!.metadata.uid } });
    await waitFor('every pod of the cycle to be deleted', async () => {
      const left = await client.list<Pod>(RESOURCES.pods, 'default');
      return !left.items.some((pod) => pod.metadata.name!.startsWith('circle-'));
    });
  });
});

describe('garbage collector after a restart', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'skiff-gc-restart-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('collects objects whose owner was deleted while it was not running', async () => {
    const down = await startControlPlane([garbageCollector], { dataDir, enabled: ['-garbage-collector'] });
    try {
      const d = await createDeployment(down.client, 'while-down');
      await createReplicaSet(down.client, 'while-down-rs', [ownerRef(d, 'Deployment')]);
      await down.client.delete(RESOURCES.deployments, 'while-down', 'default');
      expect(await exists(down.client, RESOURCES.replicasets, 'while-down-rs')).toBe(true);
    } finally {
      await down.stop();
    }

    const up = await startControlPlane([garbageCollector], { dataDir });
    try {
      await waitFor('the orphaned ReplicaSet to be collected at startup', async () => !(await exists(up.client, RESOURCES.replicasets, 'while-down-rs')));
    } finally {
      await up.stop();
    }
  });
});
