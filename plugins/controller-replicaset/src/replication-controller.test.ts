import { RESOURCES, type Event, type Pod, type ReplicationController } from '@skiff/api';
import { AdmissionError, definePlugin } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import replicaSetController, { REPLICATION_CONTROLLER_NAME } from './index.js';

/** Refuses every pod labelled `refuse: "true"`, the way an exhausted quota refuses pods. */
const refusePods = definePlugin({
  name: 'refuse-labelled-pods',
  version: '0.0.0',
  kernel: '*',
  apply(kernel) {
    kernel.hooks.validate.tapPromise('refuse-labelled-pods', async (request) => {
      if (request.operation === 'CREATE' && request.resource.resource === 'pods' && request.object?.metadata.labels?.refuse === 'true')
        throw new AdmissionError('pods "refused" is forbidden: exceeded quota: pods', 403);
    });
  },
});

let plane: ControlPlane;
beforeAll(async () => {
  // Only the ReplicationController controller: what happens here is its doing, not the ReplicaSet one's.
  plane = await startControlPlane([replicaSetController, refusePods], { enabled: [REPLICATION_CONTROLLER_NAME] });
});
afterAll(async () => {
  await plane?.stop();
});

function replicationController(name: string, replicas: number, extraLabels: Record<string, string> = {}): ReplicationController {
  return {
    apiVersion: 'v1',
    kind: 'ReplicationController',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas,
      selector: { name },
      template: { metadata: { labels: { name, tier: 'web', ...extraLabels } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } },
    },
  };
}

async function podsOf(rc: ReplicationController): Promise<Pod[]> {
  const list = await plane.client.list<Pod>(RESOURCES.pods, 'default', { labelSelector: `name=${rc.metadata.name}` });
  return list.items.filter(
    (pod) => pod.metadata.ownerReferences?.some((ref) => ref.uid === rc.metadata.uid && ref.controller) && !pod.metadata.deletionTimestamp,
  );
}

async function getRc(name: string): Promise<ReplicationController> {
  return plane.client.get<ReplicationController>(RESOURCES.replicationcontrollers, name, 'default');
}

describe('ReplicationController controller against a real API server', () => {
  it('creates pods owned by the ReplicationController, reports them and records events on it', async () => {
    const rc = await plane.client.create<ReplicationController>(RESOURCES.replicationcontrollers, replicationController('web', 2), 'default');
    const pods = await waitFor('2 pods', async () => ((await podsOf(rc)).length === 2 ? podsOf(rc) : undefined));
    for (const pod of pods) {
      expect(pod.metadata.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2-9]{5}$/);
      expect(pod.metadata.labels).toEqual({ name: 'web', tier: 'web' });
      expect(pod.metadata.ownerReferences).toEqual([
        { apiVersion: 'v1', kind: 'ReplicationController', name: 'web', uid: rc.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
    }
    const status = await waitFor('status.replicas 2', async () => {
      const current = await getRc('web');
      return current.status?.replicas === 2 && current.status;
    });
    expect(status).toEqual({ replicas: 2, fullyLabeledReplicas: 2, observedGeneration: rc.metadata.generation });

    const events = await waitFor('SuccessfulCreate events', async () => {
      const list = await plane.client.list<Event>(RESOURCES.events, 'default');
      const created = list.items.filter((event) => event.involvedObject.uid === rc.metadata.uid && event.reason === 'SuccessfulCreate');
      return created.length === 2 && created;
    });
    expect(events[0]!.involvedObject).toMatchObject({ apiVersion: 'v1', kind: 'ReplicationController', name: 'web' });
  });

  it('follows the scale subresource down and up', async () => {
    const rc = await plane.client.create<ReplicationController>(RESOURCES.replicationcontrollers, replicationController('scaled', 1), 'default');
    await waitFor('1 pod', async () => (await podsOf(rc)).length === 1);
    await plane.client.patch(
      RESOURCES.replicationcontrollers,
      'scaled',
      { spec: { replicas: 3 } },
      { namespace: 'default', subresource: 'scale', patchType: 'merge' },
    );
    await waitFor('3 pods', async () => (await podsOf(rc)).length === 3);
    await plane.client.patch(
      RESOURCES.replicationcontrollers,
      'scaled',
      { spec: { replicas: 0 } },
      { namespace: 'default', subresource: 'scale', patchType: 'merge' },
    );
    await waitFor('no pods', async () => (await podsOf(rc)).length === 0);
    const status = await waitFor('status.replicas 0 for the last generation', async () => {
      const current = await getRc('scaled');
      return current.status?.replicas === 0 && current.status.observedGeneration === current.metadata.generation && current.status;
    });
    expect(status.observedGeneration).toBe(3);
  });

  it('adopts a matching orphan and releases a pod whose labels stop matching', async () => {
    await plane.client.create<Pod>(
      RESOURCES.pods,
      { metadata: { name: 'pod-adoption', namespace: 'default', labels: { name: 'adoption' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } },
      'default',
    );
    const rc = await plane.client.create<ReplicationController>(RESOURCES.replicationcontrollers, replicationController('adoption', 1), 'default');
    const adopted = await waitFor('the orphan to be adopted', async () => {
      const pod = await plane.client.get<Pod>(RESOURCES.pods, 'pod-adoption', 'default');
      return pod.metadata.ownerReferences?.length ? pod : undefined;
    });
    expect(adopted.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'ReplicationController', name: 'adoption', uid: rc.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    // The adopted pod is the one replica, and lacks the template's `tier` label: it is not fully labelled.
    const status = await waitFor('status.replicas 1', async () => {
      const current = await getRc('adoption');
      return current.status?.replicas === 1 && current.status;
    });
    expect(status.fullyLabeledReplicas ?? 0).toBe(0);
    expect((await podsOf(rc)).map((pod) => pod.metadata.name)).toEqual(['pod-adoption']);

    await plane.client.patch(RESOURCES.pods, 'pod-adoption', { metadata: { labels: { name: 'elsewhere' } } }, { namespace: 'default', patchType: 'merge' });
    await waitFor('the pod to be released', async () => {
      const pod = await plane.client.get<Pod>(RESOURCES.pods, 'pod-adoption', 'default');
      return !pod.metadata.ownerReferences?.length;
    });
    const replacement = await waitFor('a replacement pod', async () => {
      const current = await podsOf(rc);
      return current.length === 1 && current[0];
    });
    expect(replacement.metadata.name).not.toBe('pod-adoption');
  });

  it('reports ReplicaFailure while pods are refused, and drops it once scaled to what exists', async () => {
    const rc = await plane.client.create<ReplicationController>(
      RESOURCES.replicationcontrollers,
      replicationController('condition-test', 1, { refuse: 'true' }),
      'default',
    );
    const failing = await waitFor('a ReplicaFailure condition', async () => {
      const current = await getRc('condition-test');
      return current.status?.conditions?.find((condition) => condition.type === 'ReplicaFailure');
    });
    expect(failing).toMatchObject({ status: 'True', reason: 'FailedCreate' });
    expect(failing.message).toContain('exceeded quota');
    const warning = await waitFor('a FailedCreate event', async () => {
      const list = await plane.client.list<Event>(RESOURCES.events, 'default');
      return list.items.find((event) => event.involvedObject.uid === rc.metadata.uid && event.reason === 'FailedCreate');
    });
    expect(warning.type).toBe('Warning');

    await plane.client.patch(RESOURCES.replicationcontrollers, 'condition-test', { spec: { replicas: 0 } }, { namespace: 'default', patchType: 'merge' });
    const healed = await waitFor('the condition to be gone', async () => {
      const current = await getRc('condition-test');
      return current.status?.observedGeneration === current.metadata.generation && !current.status?.conditions?.length && current.status;
    });
    expect(healed).toEqual({ replicas: 0, observedGeneration: 2 });
  });
});
