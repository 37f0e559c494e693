import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  isApiError,
  RESOURCES,
  type Event,
  type KubeObject,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type ResourceType,
  type StorageClass,
} from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import storageHostPath from './index.js';
import { ANNOTATION, FINALIZER, PROVISIONER } from './names.js';

const NS = 'default';

function claim(name: string, spec: Partial<PersistentVolumeClaim['spec']> = {}): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: NS },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
  };
}

function staticVolume(name: string, storage: string, extra: { labels?: Record<string, string>; className?: string; modes?: string[] } = {}): PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, ...(extra.labels && { labels: extra.labels }) },
    spec: {
      capacity: { storage },
      accessModes: extra.modes ?? ['ReadWriteOnce'],
      storageClassName: extra.className ?? 'manual',
      hostPath: { path: `/tmp/skiff-static/${name}` },
    },
  };
}

async function find<T extends KubeObject>(client: ApiClient, type: ResourceType, name: string, namespace?: string): Promise<T | undefined> {
  try {
    return await client.get<T>(type, name, namespace);
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

const boundClaim = (client: ApiClient, name: string) =>
  waitFor(`claim ${name} to be Bound`, async () => {
    const current = await client.get<PersistentVolumeClaim>(RESOURCES.persistentvolumeclaims, name, NS);
    return current.status?.phase === 'Bound' && current;
  });

describe('host-path storage against a real API server', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane([storageHostPath]);
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('creates the default StorageClass at start', async () => {
    const standard = await plane.client.get<StorageClass>(RESOURCES.storageclasses, 'standard');
    expect(standard).toMatchObject({
      metadata: { annotations: { [ANNOTATION.IS_DEFAULT_CLASS]: 'true' } },
      provisioner: PROVISIONER,
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
    });
  });

  it('provisions a host directory for a claim without a class, binds both ways, and removes both when the claim goes', async () => {
    const { client } = plane;
    const created = await client.create(RESOURCES.persistentvolumeclaims, claim('data', { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] }), NS);
    expect(created.spec!.storageClassName).toBe('standard');
    expect(created.metadata.finalizers).toEqual([FINALIZER.PVC_PROTECTION]);

    const bound = await boundClaim(client, 'data');
    const volumeName = `pvc-${created.metadata.uid}`;
    expect(bound.spec!.volumeName).toBe(volumeName);
    expect(bound.status).toEqual({ phase: 'Bound', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] });
    expect(bound.metadata.annotations).toMatchObject({
      [ANNOTATION.BIND_COMPLETED]: 'yes',
      [ANNOTATION.BOUND_BY_CONTROLLER]: 'yes',
      [ANNOTATION.STORAGE_PROVISIONER]: PROVISIONER,
    });

    const volume = await client.get<PersistentVolume>(RESOURCES.persistentvolumes, volumeName);
    const path = join(plane.dataDir, 'volumes', volumeName);
    expect(volume.metadata.annotations).toMatchObject({ [ANNOTATION.PROVISIONED_BY]: PROVISIONER });
    expect(volume.metadata.finalizers).toEqual([FINALIZER.PV_PROTECTION]);
    expect(volume.spec).toMatchObject({
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: 'standard',
      hostPath: { path },
      claimRef: { kind: 'PersistentVolumeClaim', namespace: NS, name: 'data', uid: created.metadata.uid },
    });
    expect(volume.status?.phase).toBe('Bound');
    expect(existsSync(path)).toBe(true);

    await client.delete(RESOURCES.persistentvolumeclaims, 'data', NS);
    await waitFor('the claim to be gone', async () => !(await find(client, RESOURCES.persistentvolumeclaims, 'data', NS)));
    await waitFor('the volume to be gone', async () => !(await find(client, RESOURCES.persistentvolumes, volumeName)));
    expect(existsSync(path)).toBe(false);
  });

  it('binds a claim to the smallest matching pre-existing volume, honouring its selector', async () => {
    const { client } = plane;
    await client.create(RESOURCES.persistentvolumes, staticVolume('static-tiny', '100Mi'));
    await client.create(RESOURCES.persistentvolumes, staticVolume('static-big', '5Gi'));
    await client.create(RESOURCES.persistentvolumes, staticVolume('static-small', '1Gi'));
    await client.create(RESOURCES.persistentvolumes, staticVolume('static-rwx', '1Gi', { modes: ['ReadWriteMany'] }));
    await client.create(RESOURCES.persistentvolumes, staticVolume('static-fast', '2Gi', { labels: { speed: 'fast' } }));
    await waitFor('the static volumes to be Available', async () =>
      (await client.list<PersistentVolume>(RESOURCES.persistentvolumes)).items
        .filter((volume) => volume.metadata.name!.startsWith('static-'))
        .every((volume) => volume.status?.phase === 'Available'),
    );

    await client.create(RESOURCES.persistentvolumeclaims, claim('manual', { storageClassName: 'manual', resources: { requests: { storage: '500Mi' } } }), NS);
    expect((await boundClaim(client, 'manual')).spec!.volumeName).toBe('static-small');
    const small = await client.get<PersistentVolume>(RESOURCES.persistentvolumes, 'static-small');
    expect(small.status?.phase).toBe('Bound');
    expect(small.spec.claimRef).toMatchObject({ namespace: NS, name: 'manual' });
    expect(small.metadata.annotations?.[ANNOTATION.BOUND_BY_CONTROLLER]).toBe('yes');
    expect((await boundClaim(client, 'manual')).status?.capacity).toEqual({ storage: '1Gi' });

    await client.create(
      RESOURCES.persistentvolumeclaims,
      claim('selective', { storageClassName: 'manual', resources: { requests: { storage: '500Mi' } }, selector: { matchLabels: { speed: 'fast' } } }),
      NS,
    );
    expect((await boundClaim(client, 'selective')).spec!.volumeName).toBe('static-fast');

    // Retain (the default for hand-made volumes): the claim's deletion leaves the volume Released, not reused.
    await client.delete(RESOURCES.persistentvolumeclaims, 'manual', NS);
    await waitFor(
      'the static volume to be Released',
      async () => (await client.get<PersistentVolume>(RESOURCES.persistentvolumes, 'static-small')).status?.phase === 'Released',
    );
  });

  it('leaves a claim that asks for no class Pending while no class-less volume fits', async () => {
    const { client } = plane;
    const created = await client.create(RESOURCES.persistentvolumeclaims, claim('classless', { storageClassName: '' }), NS);
    expect(created.spec!.storageClassName).toBe('');
    await waitFor('a FailedBinding event', async () =>
      (await client.list<Event>(RESOURCES.events, NS)).items.some((event) => event.reason === 'FailedBinding'),
    );
    expect((await client.get<PersistentVolumeClaim>(RESOURCES.persistentvolumeclaims, 'classless', NS)).status?.phase).toBe('Pending');

    await client.create(RESOURCES.persistentvolumes, staticVolume('classless-volume', '1Gi', { className: '' }));
    expect((await boundClaim(client, 'classless')).spec!.volumeName).toBe('classless-volume');
  });

  it('keeps a provisioned volume and its directory under the Retain policy', async () => {
    const { client } = plane;
    await client.create<StorageClass>(RESOURCES.storageclasses, {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'keep' },
      provisioner: PROVISIONER,
      reclaimPolicy: 'Retain',
    });
    await client.create(RESOURCES.persistentvolumeclaims, claim('kept', { storageClassName: 'keep' }), NS);
    const volumeName = (await boundClaim(client, 'kept')).spec!.volumeName!;
    const path = join(plane.dataDir, 'volumes', volumeName);
    expect(existsSync(path)).toBe(true);

    await client.delete(RESOURCES.persistentvolumeclaims, 'kept', NS);
    const released = await waitFor('the volume to be Released', async () => {
      const volume = await client.get<PersistentVolume>(RESOURCES.persistentvolumes, volumeName);
      return volume.status?.phase === 'Released' && volume;
    });
    expect(released.spec.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(existsSync(path)).toBe(true);

    // Deleting a Released volume by hand is allowed (pv-protection lets it go); a Retain volume keeps its data.
    await client.delete(RESOURCES.persistentvolumes, volumeName);
    await waitFor('the volume to be gone', async () => !(await find(client, RESOURCES.persistentvolumes, volumeName)));
    expect(existsSync(path)).toBe(true);
  });

  it('keeps a claim that a pod mounts until the pod is gone (pvc-protection), and a bound volume while bound (pv-protection)', async () => {
    const { client } = plane;
    await client.create(RESOURCES.persistentvolumeclaims, claim('in-use'), NS);
    const volumeName = (await boundClaim(client, 'in-use')).spec!.volumeName!;
    await client.create(
      RESOURCES.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'user', namespace: NS },
        spec: {
          containers: [{ name: 'app', image: 'nginx:1.25', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'in-use' } }],
        },
      },
      NS,
    );
    await client.delete(RESOURCES.persistentvolumes, volumeName);
    await client.delete(RESOURCES.persistentvolumeclaims, 'in-use', NS);
    const terminating = await client.get<PersistentVolumeClaim>(RESOURCES.persistentvolumeclaims, 'in-use', NS);
    expect(terminating.metadata.deletionTimestamp).toBeDefined();

    // A pass of the controller has seen the claim being deleted; it must stay while the pod is there.
    await waitFor(
      'the volume deletion to be seen',
      async () => !!(await client.get<PersistentVolume>(RESOURCES.persistentvolumes, volumeName)).metadata.deletionTimestamp,
    );
    const heldClaim = await client.get<PersistentVolumeClaim>(RESOURCES.persistentvolumeclaims, 'in-use', NS);
    expect(heldClaim.metadata.finalizers).toContain(FINALIZER.PVC_PROTECTION);
    const heldVolume = await client.get<PersistentVolume>(RESOURCES.persistentvolumes, volumeName);
    expect(heldVolume.metadata.finalizers).toContain(FINALIZER.PV_PROTECTION);
    expect(heldVolume.status?.phase).toBe('Bound');

    await client.delete(RESOURCES.pods, 'user', NS, { gracePeriodSeconds: 0 });
    await waitFor('the claim to be gone', async () => !(await find(client, RESOURCES.persistentvolumeclaims, 'in-use', NS)));
    await waitFor('the volume to be gone', async () => !(await find(client, RESOURCES.persistentvolumes, volumeName)));
    expect(existsSync(join(plane.dataDir, 'volumes', volumeName))).toBe(false);
  });
});

describe('WaitForFirstConsumer', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane([storageHostPath]);
    await plane.client.create<StorageClass>(RESOURCES.storageclasses, {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'late' },
      provisioner: PROVISIONER,
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    await plane.client.create(RESOURCES.nodes, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-2', labels: { 'kubernetes.io/hostname': 'node-2' } },
    });
  });
  afterAll(async () => {
    await plane?.stop();
  });

  const events = async (reason: string) =>
    (await plane.client.list<Event>(RESOURCES.events, NS)).items.filter((event) => event.reason === reason).map((event) => event.message);

  it('provisions only once the scheduler selected a node, and pins the volume to it', async () => {
    const { client } = plane;
    await client.create(RESOURCES.persistentvolumeclaims, claim('late', { storageClassName: 'late' }), NS);
    await waitFor('a WaitForFirstConsumer event', async () => (await events('WaitForFirstConsumer')).length > 0);
    await client.create(
      RESOURCES.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'consumer', namespace: NS },
        spec: { containers: [{ name: 'app', image: 'nginx:1.25' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'late' } }] },
      },
      NS,
    );
    expect(await waitFor('a WaitForPodScheduled event', async () => (await events('WaitForPodScheduled'))[0])).toBe('waiting for pod consumer to be scheduled');
    const waiting = await client.get<PersistentVolumeClaim>(RESOURCES.persistentvolumeclaims, 'late', NS);
    expect(waiting.status?.phase).toBe('Pending');
    expect(waiting.spec!.volumeName).toBeUndefined();

    await client.update(RESOURCES.persistentvolumeclaims, {
      ...waiting,
      metadata: { ...waiting.metadata, annotations: { ...waiting.metadata.annotations, [ANNOTATION.SELECTED_NODE]: 'node-2' } },
    });
    const bound = await boundClaim(client, 'late');
    const volume = await client.get<PersistentVolume>(RESOURCES.persistentvolumes, bound.spec!.volumeName!);
    expect(volume.spec.nodeAffinity).toEqual({
      required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-2'] }] }] },
    });
  });

  it('leaves a free volume to the scheduler, and binds the one it pre-binds', async () => {
    const { client } = plane;
    await client.create(RESOURCES.persistentvolumes, staticVolume('late-free', '1Gi', { className: 'late' }));
    const created = await client.create(RESOURCES.persistentvolumeclaims, claim('late-static', { storageClassName: 'late' }), NS);
    await waitFor(
      'the volume to be Available',
      async () => (await client.get<PersistentVolume>(RESOURCES.persistentvolumes, 'late-free')).status?.phase === 'Available',
    );
    await waitFor('a WaitForFirstConsumer event for the claim', async () =>
      (await client.list<Event>(RESOURCES.events, NS)).items.some(
        (event) => event.involvedObject.name === 'late-static' && event.reason === 'WaitForFirstConsumer',
      ),
    );
    expect((await client.get<PersistentVolumeClaim>(RESOURCES.persistentvolumeclaims, 'late-static', NS)).spec!.volumeName).toBeUndefined();

    const free = await client.get<PersistentVolume>(RESOURCES.persistentvolumes, 'late-free');
    await client.update(RESOURCES.persistentvolumes, {
      ...free,
      spec: { ...free.spec, claimRef: { kind: 'PersistentVolumeClaim', namespace: NS, name: 'late-static', uid: created.metadata.uid } },
    });
    expect((await boundClaim(client, 'late-static')).spec!.volumeName).toBe('late-free');
  });
});

describe('options', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane([[storageHostPath, { storageClassName: 'local', volumesDir: 'disks' }]]);
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('names the default class and the volumes folder as configured', async () => {
    const { client } = plane;
    expect(await find(client, RESOURCES.storageclasses, 'standard')).toBeUndefined();
    await client.create(RESOURCES.persistentvolumeclaims, claim('data'), NS);
    const bound = await boundClaim(client, 'data');
    expect(bound.spec!.storageClassName).toBe('local');
    expect(existsSync(join(plane.dataDir, 'disks', bound.spec!.volumeName!))).toBe(true);
  });
});

describe('claims naming their volume, and volumes we cannot delete', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane([storageHostPath]);
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('binds a claim to the volume it names, not to a smaller free one, without claiming the binding as ours', async () => {
    const { client } = plane;
    await client.create(RESOURCES.persistentvolumes, staticVolume('named-small', '1Gi'));
    await client.create(RESOURCES.persistentvolumes, staticVolume('named-big', '3Gi'));
    await client.create(RESOURCES.persistentvolumeclaims, claim('named', { storageClassName: 'manual', volumeName: 'named-big' }), NS);
    const bound = await boundClaim(client, 'named');
    expect(bound.spec!.volumeName).toBe('named-big');
    expect(bound.status?.capacity).toEqual({ storage: '3Gi' });
    expect(bound.metadata.annotations?.[ANNOTATION.BIND_COMPLETED]).toBe('yes');
    expect(bound.metadata.annotations?.[ANNOTATION.BOUND_BY_CONTROLLER]).toBeUndefined();
    expect((await client.get<PersistentVolume>(RESOURCES.persistentvolumes, 'named-small')).spec.claimRef).toBeUndefined();
  });

  it('marks a released hand-made volume with the Delete policy Failed, and leaves its host path alone', async () => {
    const { client } = plane;
    const handMade = staticVolume('hand-made', '1Gi', { className: 'hand' });
    handMade.spec.persistentVolumeReclaimPolicy = 'Delete';
    await client.create(RESOURCES.persistentvolumes, handMade);
    await client.create(RESOURCES.persistentvolumeclaims, claim('hand', { storageClassName: 'hand' }), NS);
    await boundClaim(client, 'hand');
    await client.delete(RESOURCES.persistentvolumeclaims, 'hand', NS);
    const failed = await waitFor('the volume to be Failed', async () => {
      const volume = await client.get<PersistentVolume>(RESOURCES.persistentvolumes, 'hand-made');
      return volume.status?.phase === 'Failed' && volume;
    });
    expect(failed.status?.message).toBe('error getting deleter volume plugin for volume "hand-made": no deletable volume plugin matched');
  });
});
