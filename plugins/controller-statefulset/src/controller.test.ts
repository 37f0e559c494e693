import { RESOURCES, type ControllerRevision, type Event, type PersistentVolumeClaim, type Pod, type StatefulSet, type StatefulSetSpec } from '@skiff/api';
import kubelet from '@skiff/kubelet';
import garbageCollector from '@skiff/plugin-controller-garbage-collector';
import criSimulated from '@skiff/plugin-cri-simulated';
import networkIpam from '@skiff/plugin-network-ipam';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import storageHostPath from '@skiff/plugin-storage-host-path';
import volumesBuiltin from '@skiff/plugin-volumes-builtin';
import scheduler from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import statefulSetController from './index.js';

// The controller with a scheduler placing its pods and simulated kubelets running them: readiness and
// deletion come from the kubelet, not from the test. The garbage collector takes claims whose owners go.

const MISSING_IMAGE = 'example.com/missing:1';
const TIMEOUT = { timeoutMs: 20_000 };
const ns = 'default';
let plane: ControlPlane;

beforeAll(async () => {
  plane = await startControlPlane(
    [
      statefulSetController,
      [garbageCollector, { resources: ['pods', 'statefulsets.apps', 'persistentvolumeclaims', 'controllerrevisions.apps'] }],
      scheduler,
      resourcesFit,
      [kubelet, { heartbeatSeconds: 1 }],
      [criSimulated, { failImages: [MISSING_IMAGE] }],
      networkIpam,
      // The kubelet mounts each pod's claim: the host-path provisioner binds the claims, the built-in volumes mount them.
      storageHostPath,
      volumesBuiltin,
    ],
    { config: { nodes: 2, logLevel: 'silent' } },
  );
});
afterAll(async () => {
  await plane?.stop();
});

function statefulSet(name: string, spec: Partial<StatefulSetSpec> = {}, image = 'nginx:1.25'): StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name },
    spec: {
      replicas: 3,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
      ...spec,
    },
  };
}

const claimTemplate = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };

interface Seen {
  type: string;
  name: string;
  ready: boolean;
  terminating: boolean;
  revision?: string;
}

/** Records every pod event of one set, in the order the API server stored them. */
function recordPods(app: string): { events: Seen[]; stop: () => void } {
  const events: Seen[] = [];
  const controller = new AbortController();
  void (async () => {
    try {
      for await (const event of plane.client.watch<Pod>(RESOURCES.pods, ns, { labelSelector: `app=${app}`, signal: controller.signal })) {
        if (event.type === 'BOOKMARK' || event.type === 'ERROR') continue;
        const pod = event.object as Pod;
        events.push({
          type: event.type,
          name: pod.metadata.name!,
          ready: pod.status?.phase === 'Running' && pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
          terminating: Boolean(pod.metadata.deletionTimestamp),
          revision: pod.metadata.labels?.['controller-revision-hash'],
        });
      }
    } catch {
      // aborted at the end of the test
    }
  })();
  return { events, stop: () => controller.abort() };
}

const firstIndex = (events: Seen[], match: (seen: Seen) => boolean): number => events.findIndex(match);

async function getSet(name: string): Promise<StatefulSet> {
  return plane.client.get<StatefulSet>(RESOURCES.statefulsets, name, ns);
}

async function podsOf(app: string): Promise<Pod[]> {
  const list = await plane.client.list<Pod>(RESOURCES.pods, ns, { labelSelector: `app=${app}` });
  return list.items.sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
}

async function claimsOf(app: string): Promise<PersistentVolumeClaim[]> {
  const list = await plane.client.list<PersistentVolumeClaim>(RESOURCES.persistentvolumeclaims, ns, { labelSelector: `app=${app}` });
  return list.items.sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
}

/** Waits until the set reports every replica ready at one revision for its current generation. */
async function rolledOut(name: string, replicas: number): Promise<StatefulSet> {
  return waitFor(
    `${name} rolled out with ${replicas} ready replicas`,
    async () => {
      const set = await getSet(name);
      const status = set.status;
      const done =
        status !== undefined &&
        status.observedGeneration === set.metadata.generation &&
        status.replicas === replicas &&
        (status.readyReplicas ?? 0) === replicas &&
        status.currentRevision === status.updateRevision;
      return done && set;
    },
    TIMEOUT,
  );
}

async function patchSet(name: string, patch: unknown): Promise<void> {
  await plane.client.patch(RESOURCES.statefulsets, name, patch, { namespace: ns, patchType: 'merge' });
}

describe('OrderedReady StatefulSet', () => {
  it('creates web-0, web-1, web-2 in order, each only once the one before is Running and Ready, with its claim first', async () => {
    const recorder = recordPods('web');
    const created = await plane.client.create<StatefulSet>(RESOURCES.statefulsets, statefulSet('web', { volumeClaimTemplates: [claimTemplate] }), ns);
    const set = await rolledOut('web', 3);
    recorder.stop();

    const added = recorder.events.filter((e) => e.type === 'ADDED').map((e) => e.name);
    expect(added).toEqual(['web-0', 'web-1', 'web-2']);
    for (const [previous, next] of [
      ['web-0', 'web-1'],
      ['web-1', 'web-2'],
    ] as const) {
      expect(firstIndex(recorder.events, (e) => e.name === previous && e.ready)).toBeLessThan(firstIndex(recorder.events, (e) => e.name === next));
    }

    expect(set.status).toMatchObject({ replicas: 3, readyReplicas: 3, availableReplicas: 3, currentReplicas: 3, updatedReplicas: 3, collisionCount: 0 });
    const revisions = (await plane.client.list<ControllerRevision>(RESOURCES.controllerrevisions, ns, { labelSelector: 'app=web' })).items;
    expect(revisions).toHaveLength(1);
    expect(revisions[0]!.metadata.name).toBe(set.status!.currentRevision);
    expect(revisions[0]!.revision).toBe(1);
    expect(revisions[0]!.metadata.ownerReferences).toEqual([
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);

    const pods = await podsOf('web');
    for (const [ordinal, pod] of pods.entries()) {
      expect(pod.metadata.labels).toEqual({
        app: 'web',
        'controller-revision-hash': set.status!.currentRevision,
        'statefulset.kubernetes.io/pod-name': `web-${ordinal}`,
        'apps.kubernetes.io/pod-index': String(ordinal),
      });
      expect(pod.spec.hostname).toBe(`web-${ordinal}`);
      expect(pod.spec.subdomain).toBe('web');
      expect(pod.spec.volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: `data-web-${ordinal}` } });
    }
    const claims = await claimsOf('web');
    expect(claims.map((claim) => claim.metadata.name)).toEqual(['data-web-0', 'data-web-1', 'data-web-2']);
    expect(claims.every((claim) => claim.metadata.ownerReferences === undefined && claim.status?.phase === 'Bound')).toBe(true);

    const events = (await plane.client.list<Event>(RESOURCES.events, ns)).items.filter((e) => e.involvedObject.uid === created.metadata.uid);
    const messages = events.map((e) => e.message);
    expect(messages).toContain('create Claim data-web-0 Pod web-0 in StatefulSet web success');
    expect(messages).toContain('create Pod web-2 in StatefulSet web successful');
  });

  it('scales down from the top, each pod gone before the next goes, and keeps the claims (Retain)', async () => {
    const recorder = recordPods('web');
    await patchSet('web', { spec: { replicas: 1 } });
    await rolledOut('web', 1);
    await waitFor('web-1 and web-2 deleted', async () => (await podsOf('web')).length === 1, TIMEOUT);
    recorder.stop();
    const deleted = recorder.events.filter((e) => e.type === 'DELETED').map((e) => e.name);
    expect(deleted).toEqual(['web-2', 'web-1']);
    expect(firstIndex(recorder.events, (e) => e.type === 'DELETED' && e.name === 'web-2')).toBeLessThan(
      firstIndex(recorder.events, (e) => e.name === 'web-1' && e.terminating),
    );
    expect((await claimsOf('web')).map((claim) => claim.metadata.name)).toEqual(['data-web-0', 'data-web-1', 'data-web-2']);
  });

  it('rolls a new image in reverse ordinal order, and the undo goes back to the first revision renumbered', async () => {
    await patchSet('web', { spec: { replicas: 3 } });
    const before = await rolledOut('web', 3);
    const recorder = recordPods('web');
    await patchSet('web', { spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:1.26' }] } } } });
    const after = await rolledOut('web', 3);
    recorder.stop();
    expect(after.status!.updateRevision).not.toBe(before.status!.updateRevision);
    const rolled = recorder.events.filter((e) => e.type === 'DELETED').map((e) => e.name);
    expect(rolled).toEqual(['web-2', 'web-1', 'web-0']);
    expect(firstIndex(recorder.events, (e) => e.name === 'web-2' && e.revision === after.status!.updateRevision && e.ready)).toBeLessThan(
      firstIndex(recorder.events, (e) => e.name === 'web-1' && e.terminating),
    );
    const pods = await podsOf('web');
    expect(pods.map((pod) => [pod.spec.containers[0]!.image, pod.metadata.labels!['controller-revision-hash']])).toEqual(
      Array.from({ length: 3 }, () => ['nginx:1.26', after.status!.updateRevision]),
    );

    // What `kubectl rollout undo` does: send the earlier revision's data as a strategic merge patch.
    const first = await plane.client.get<ControllerRevision>(RESOURCES.controllerrevisions, before.status!.updateRevision!, ns);
    await plane.client.patch(RESOURCES.statefulsets, 'web', first.data, { namespace: ns, patchType: 'strategic' });
    const undone = await rolledOut('web', 3);
    expect(undone.status!.updateRevision).toBe(first.metadata.name);
    expect((await plane.client.get<ControllerRevision>(RESOURCES.controllerrevisions, first.metadata.name!, ns)).revision).toBe(3);
    expect((await podsOf('web')).every((pod) => pod.spec.containers[0]!.image === 'nginx:1.25')).toBe(true);
  });

  it('stops a rollout at the partition', async () => {
    await plane.client.create<StatefulSet>(
      RESOURCES.statefulsets,
      statefulSet('canary', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } }, podManagementPolicy: 'Parallel' }),
      ns,
    );
    const before = await rolledOut('canary', 3);
    await patchSet('canary', { spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:1.26' }] } } } });
    const set = await waitFor(
      'web-2 updated',
      async () => {
        const current = await getSet('canary');
        return current.status?.updatedReplicas === 1 && current.status.readyReplicas === 3 && current;
      },
      TIMEOUT,
    );
    expect(set.status!.currentRevision).toBe(before.status!.currentRevision);
    expect(set.status!.currentReplicas).toBe(2);
    const images = (await podsOf('canary')).map((pod) => `${pod.metadata.name} ${pod.spec.containers[0]!.image}`);
    expect(images).toEqual(['canary-0 nginx:1.25', 'canary-1 nginx:1.25', 'canary-2 nginx:1.26']);
  });

  it('does not go past a pod that never becomes ready', async () => {
    await plane.client.create<StatefulSet>(RESOURCES.statefulsets, statefulSet('stuck', {}, MISSING_IMAGE), ns);
    await waitFor('stuck-0 created', async () => (await podsOf('stuck')).length === 1, TIMEOUT);
    await waitFor('the status to report stuck-0', async () => (await getSet('stuck')).status?.replicas === 1, TIMEOUT);
    // A further pass (a label on the set) must still not create stuck-1.
    await patchSet('stuck', { metadata: { labels: { poke: 'yes' } } });
    await waitFor('the poke observed', async () => (await getSet('stuck')).metadata.labels?.poke === 'yes');
    expect((await podsOf('stuck')).map((pod) => pod.metadata.name)).toEqual(['stuck-0']);
  });
});

describe('Parallel StatefulSet', () => {
  it('creates every pod at once, ready or not, from spec.ordinals.start', async () => {
    await plane.client.create<StatefulSet>(
      RESOURCES.statefulsets,
      statefulSet('burst', { podManagementPolicy: 'Parallel', ordinals: { start: 5 } }, MISSING_IMAGE),
      ns,
    );
    const pods = await waitFor(
      'three pods',
      async () => {
        const current = await podsOf('burst');
        return current.length === 3 && current;
      },
      TIMEOUT,
    );
    expect(pods.map((pod) => pod.metadata.name)).toEqual(['burst-5', 'burst-6', 'burst-7']);
    expect(pods.map((pod) => pod.metadata.labels!['apps.kubernetes.io/pod-index'])).toEqual(['5', '6', '7']);
  });
});

describe('persistentVolumeClaimRetentionPolicy', () => {
  it('Delete/Delete: a scaled-down pod takes its claim along, deleting the set takes the rest', async () => {
    const created = await plane.client.create<StatefulSet>(
      RESOURCES.statefulsets,
      statefulSet('db', {
        podManagementPolicy: 'Parallel',
        volumeClaimTemplates: [claimTemplate],
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
      }),
      ns,
    );
    await rolledOut('db', 3);
    const claims = await claimsOf('db');
    expect(claims.map((claim) => claim.metadata.ownerReferences)).toEqual(
      Array.from({ length: 3 }, () => [
        { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]),
    );

    await patchSet('db', { spec: { replicas: 2 } });
    await waitFor(
      'data-db-2 deleted with db-2',
      async () => (await claimsOf('db')).map((claim) => claim.metadata.name).join() === 'data-db-0,data-db-1',
      TIMEOUT,
    );

    await plane.client.delete(RESOURCES.statefulsets, 'db', ns);
    await waitFor('claims and pods gone with the set', async () => (await claimsOf('db')).length === 0 && (await podsOf('db')).length === 0, TIMEOUT);
  });

  it('Retain/Delete: scaling back up after a scale-down starts the pod on a new claim', async () => {
    await plane.client.create<StatefulSet>(
      RESOURCES.statefulsets,
      statefulSet('cache', {
        replicas: 2,
        volumeClaimTemplates: [claimTemplate],
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
      }),
      ns,
    );
    await rolledOut('cache', 2);
    const [, old] = await claimsOf('cache');
    expect(old!.metadata.ownerReferences).toBeUndefined();
    await patchSet('cache', { spec: { replicas: 1 } });
    await waitFor('data-cache-1 deleted', async () => (await claimsOf('cache')).length === 1, TIMEOUT);
    await patchSet('cache', { spec: { replicas: 2 } });
    await rolledOut('cache', 2);
    const fresh = (await claimsOf('cache'))[1]!;
    expect(fresh.metadata.name).toBe('data-cache-1');
    expect(fresh.metadata.uid).not.toBe(old!.metadata.uid);
  });
});
