import { RESOURCES, type Event, type Pod, type ReplicaSet } from '@skiff/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import replicaSetController from './index.js';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';

let plane: ControlPlane;
beforeAll(async () => {
  plane = await startControlPlane([replicaSetController]);
});
afterAll(async () => {
  await plane?.stop();
});

function replicaSet(name: string, replicas: number, minReadySeconds?: number): ReplicaSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas,
      ...(minReadySeconds ? { minReadySeconds } : {}),
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name, tier: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } },
    },
  };
}

async function podsOf(rs: ReplicaSet): Promise<Pod[]> {
  const list = await plane.client.list<Pod>(RESOURCES.pods, 'default', { labelSelector: `app=${rs.metadata.name}` });
  return list.items.filter(
    (pod) => pod.metadata.ownerReferences?.some((ref) => ref.uid === rs.metadata.uid && ref.controller) && !pod.metadata.deletionTimestamp,
  );
}

async function getReplicaSet(name: string): Promise<ReplicaSet> {
  return plane.client.get<ReplicaSet>(RESOURCES.replicasets, name, 'default');
}

/** What a kubelet would report for a pod whose containers all became ready at `since`. */
async function markReady(pod: Pod, since = new Date()): Promise<void> {
  const lastTransitionTime = since.toISOString().replace(/\.\d+Z$/, 'Z');
  await plane.client.updateStatus<Pod>(RESOURCES.pods, {
    ...pod,
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime }] },
  });
}

async function scale(name: string, replicas: number): Promise<void> {
  await plane.client.patch(RESOURCES.replicasets, name, { spec: { replicas } }, { namespace: 'default', patchType: 'merge' });
}

describe('ReplicaSet controller against a real API server', () => {
  it('creates the missing pods from the template, owned by the ReplicaSet, and reports them', async () => {
    const rs = await plane.client.create<ReplicaSet>(RESOURCES.replicasets, replicaSet('create', 3), 'default');
    const pods = await waitFor('3 pods', async () => ((await podsOf(rs)).length === 3 ? podsOf(rs) : undefined));
    for (const pod of pods) {
      expect(pod.metadata.name).toMatch(/^create-[bcdfghjklmnpqrstvwxz2-9]{5}$/);
      expect(pod.metadata.labels).toEqual({ app: 'create', tier: 'web' });
      expect(pod.metadata.ownerReferences).toEqual([
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'create', uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      expect(pod.spec.containers[0]?.image).toBe('nginx:1.25');
    }
    const status = await waitFor('status.replicas 3', async () => {
      const current = await getReplicaSet('create');
      return current.status?.replicas === 3 && current.status;
    });
    expect(status).toMatchObject({ replicas: 3, fullyLabeledReplicas: 3, observedGeneration: rs.metadata.generation });

    const events = await waitFor('SuccessfulCreate events', async () => {
      const list = await plane.client.list<Event>(RESOURCES.events, 'default');
      const created = list.items.filter((event) => event.involvedObject.uid === rs.metadata.uid && event.reason === 'SuccessfulCreate');
      return created.length === 3 && created;
    });
    expect(events.map((event) => event.message).sort()).toEqual(pods.map((pod) => `Created pod: ${pod.metadata.name}`).sort());
    // No pod more than asked for, even though every creation triggered events while others were in flight.
    expect(await podsOf(rs)).toHaveLength(3);
  });

  it('counts ready and available pods, honouring minReadySeconds', async () => {
    const rs = await plane.client.create<ReplicaSet>(RESOURCES.replicasets, replicaSet('ready', 2, 2), 'default');
    const pods = await waitFor('2 pods', async () => ((await podsOf(rs)).length === 2 ? podsOf(rs) : undefined));
    await markReady(pods[0]!);
    const readyNotAvailable = await waitFor('readyReplicas 1', async () => {
      const current = await getReplicaSet('ready');
      return current.status?.readyReplicas === 1 && current.status;
    });
    expect(readyNotAvailable.availableReplicas ?? 0).toBe(0);
    // minReadySeconds is 2 and the Ready time has whole seconds, so the pod is not available yet. Nothing
    // changes in the cluster after this: only the controller's own timer can notice availability.
    const available = await waitFor('availableReplicas 1 after minReadySeconds', async () => {
      const current = await getReplicaSet('ready');
      return current.status?.availableReplicas === 1 && current.status;
    });
    expect(available).toMatchObject({ replicas: 2, readyReplicas: 1, availableReplicas: 1 });
  });

  it('scales down by deleting the pods cheapest to lose, and records it', async () => {
    const rs = await plane.client.create<ReplicaSet>(RESOURCES.replicasets, replicaSet('shrink', 3), 'default');
    const pods = await waitFor('3 pods', async () => ((await podsOf(rs)).length === 3 ? podsOf(rs) : undefined));
    const keeper = pods[1]!;
    await markReady(keeper);
    await waitFor('readyReplicas 1', async () => (await getReplicaSet('shrink')).status?.readyReplicas === 1);

    await scale('shrink', 1);
    const left = await waitFor('1 pod left', async () => {
      const current = await podsOf(rs);
      return current.length === 1 && current;
    });
    expect(left[0]!.metadata.name).toBe(keeper.metadata.name);
    await waitFor('status.replicas 1', async () => (await getReplicaSet('shrink')).status?.replicas === 1);
    const deletions = await plane.client.list<Event>(RESOURCES.events, 'default');
    const deleted = deletions.items
      .filter((event) => event.involvedObject.uid === rs.metadata.uid && event.reason === 'SuccessfulDelete')
      .map((event) => event.message);
    expect(deleted.sort()).toEqual(
      pods
        .filter((pod) => pod !== keeper)
        .map((pod) => `Deleted pod: ${pod.metadata.name}`)
        .sort(),
    );
  });

  it('replaces a pod that is deleted', async () => {
    const rs = await plane.client.create<ReplicaSet>(RESOURCES.replicasets, replicaSet('heal', 2), 'default');
    const pods = await waitFor('2 pods', async () => ((await podsOf(rs)).length === 2 ? podsOf(rs) : undefined));
    await plane.client.delete(RESOURCES.pods, pods[0]!.metadata.name!, 'default');
    const healed = await waitFor('a replacement pod', async () => {
      const current = await podsOf(rs);
      return current.length === 2 && !current.some((pod) => pod.metadata.name === pods[0]!.metadata.name) && current;
    });
    expect(healed.map((pod) => pod.metadata.name)).toContain(pods[1]!.metadata.name);
  });

  it('adopts a matching orphan instead of creating a pod, and releases a pod whose labels stop matching', async () => {
    const orphan: Pod = {
      metadata: { name: 'adopt-orphan', namespace: 'default', labels: { app: 'adopt', tier: 'web' } },
      spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] },
    };
    await plane.client.create<Pod>(RESOURCES.pods, orphan, 'default');
    const rs = await plane.client.create<ReplicaSet>(RESOURCES.replicasets, replicaSet('adopt', 2), 'default');
    const owned = await waitFor('2 owned pods', async () => {
      const current = await podsOf(rs);
      return current.length === 2 && current;
    });
    expect(owned.map((pod) => pod.metadata.name)).toContain('adopt-orphan');
    const adopted = await plane.client.get<Pod>(RESOURCES.pods, 'adopt-orphan', 'default');
    expect(adopted.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'ReplicaSet', uid: rs.metadata.uid, controller: true })]);

    await plane.client.patch(RESOURCES.pods, 'adopt-orphan', { metadata: { labels: { app: 'elsewhere' } } }, { namespace: 'default', patchType: 'merge' });
    await waitFor('the pod to be released', async () => {
      const pod = await plane.client.get<Pod>(RESOURCES.pods, 'adopt-orphan', 'default');
      return !pod.metadata.ownerReferences?.length;
    });
    const replaced = await waitFor('a replacement for the released pod', async () => {
      const current = await podsOf(rs);
      return current.length === 2 && current;
    });
    expect(replaced.map((pod) => pod.metadata.name)).not.toContain('adopt-orphan');
  });

  it('leaves pods controlled by something else alone', async () => {
    const foreign: Pod = {
      metadata: {
        name: 'foreign-pod',
        namespace: 'default',
        labels: { app: 'foreign', tier: 'web' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'someone-else', uid: 'not-this-one', controller: true }],
      },
      spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] },
    };
    await plane.client.create<Pod>(RESOURCES.pods, foreign, 'default');
    const rs = await plane.client.create<ReplicaSet>(RESOURCES.replicasets, replicaSet('foreign', 1), 'default');
    const own = await waitFor('1 own pod', async () => {
      const current = await podsOf(rs);
      return current.length === 1 && current;
    });
    expect(own[0]!.metadata.name).not.toBe('foreign-pod');
    const untouched = await plane.client.get<Pod>(RESOURCES.pods, 'foreign-pod', 'default');
    expect(untouched.metadata.ownerReferences).toEqual(foreign.metadata.ownerReferences);
  });
});
