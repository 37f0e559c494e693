import { RESOURCES, type Node, type PersistentVolume, type PersistentVolumeClaim, type Pod, type StorageClass } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import storageHostPath from '@skiff/plugin-storage-host-path';
import scheduler from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import volumeBinding from './index.js';
import { ANNOTATION } from './names.js';

const NS = 'default';
const HOST_PATH = 'skiff.dev/host-path';

const node = (name: string, zone: string): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name, 'topology.kubernetes.io/zone': zone } },
  status: {
    allocatable: { cpu: '4', memory: '8Gi', pods: 110 },
    capacity: { cpu: '4', memory: '8Gi', pods: 110 },
    conditions: [{ type: 'Ready', status: 'True' }],
  },
});

const storageClass = (name: string, provisioner: string, mode: 'Immediate' | 'WaitForFirstConsumer', extra: Partial<StorageClass> = {}): StorageClass => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name },
  provisioner,
  volumeBindingMode: mode,
  ...extra,
});

const claim = (name: string, storageClassName: string, storage = '1Gi'): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: NS },
  spec: { storageClassName, accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
});

const pinnedTo = (key: string, values: string[]) => ({ required: { nodeSelectorTerms: [{ matchExpressions: [{ key, operator: 'In', values }] }] } });

const volume = (name: string, storageClassName: string, nodeAffinity?: PersistentVolume['spec']['nodeAffinity'], storage = '1Gi'): PersistentVolume => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: {
    storageClassName,
    capacity: { storage },
    accessModes: ['ReadWriteOnce'],
    persistentVolumeReclaimPolicy: 'Retain',
    hostPath: { path: `/tmp/skiff-volume-binding-test/${name}` },
    ...(nodeAffinity ? { nodeAffinity } : {}),
  },
});

const pod = (name: string, ...claimNames: string[]): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS },
  spec: {
    containers: [{ name: 'app', image: 'nginx:1.25' }],
    volumes: claimNames.map((claimName, i) => ({ name: `data-${i}`, persistentVolumeClaim: { claimName } })),
  },
});

let plane: ControlPlane;
let client: ApiClient;

beforeAll(async () => {
  // No kubelets: the nodes are made by hand, and a bound pod stays Pending (binding is what is tested).
  plane = await startControlPlane(
    [
      [scheduler, { profiles: [{ schedulerName: 'default-scheduler', pluginConfig: [{ name: 'VolumeBinding', args: { bindTimeoutSeconds: 2 } }] }] }],
      storageHostPath,
      volumeBinding,
    ],
    { config: { logLevel: 'silent' } },
  );
  client = plane.client;
  await client.create(RESOURCES.nodes, node('node-1', 'a'));
  await client.create(RESOURCES.nodes, node('node-2', 'b'));
});
afterAll(() => plane?.stop());

const getPod = (name: string) => client.get<Pod>(RESOURCES.pods, name, NS);
const getClaim = (name: string) => client.get<PersistentVolumeClaim>(RESOURCES.persistentvolumeclaims, name, NS);
const nodeOf = (name: string) => waitFor(`${name} to be bound to a node`, async () => (await getPod(name)).spec.nodeName);
/** The PodScheduled=False message, once one containing `part` is there. */
const unschedulable = (name: string, part = '') =>
  waitFor(`${name} to be unschedulable`, async () => {
    const condition = (await getPod(name)).status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    return condition?.message?.includes(part) && condition.message;
  });

describe('VolumeBinding on a real control plane', () => {
  it('rejects a pod whose claim does not exist, and schedules it once the claim is made and bound', async () => {
    await client.create(RESOURCES.pods, pod('needs-missing', 'later'), NS);
    expect(await unschedulable('needs-missing')).toBe('0/2 nodes are available: persistentvolumeclaim "later" not found.');
    // The default class (Immediate, host-path) binds it at once; the claim's events retry the pod.
    await client.create(RESOURCES.persistentvolumeclaims, claim('later', 'standard'), NS);
    expect(await nodeOf('needs-missing')).toMatch(/^node-[12]$/);
  });

  it('rejects a pod whose claim is being deleted', async () => {
    // needs-missing mounts "later", so pvc-protection keeps the claim while it is being deleted.
    await client.delete(RESOURCES.persistentvolumeclaims, 'later', NS);
    await client.create(RESOURCES.pods, pod('too-late', 'later'), NS);
    expect(await unschedulable('too-late')).toBe('0/2 nodes are available: persistentvolumeclaim "later" is being deleted.');
  });

  it('waits while an Immediate claim is unbound, and schedules the pod once the PV controller binds it', async () => {
    await client.create(RESOURCES.storageclasses, storageClass('external', 'example.com/nobody', 'Immediate'));
    await client.create(RESOURCES.persistentvolumeclaims, claim('immediate', 'external'), NS);
    await client.create(RESOURCES.pods, pod('needs-immediate', 'immediate'), NS);
    expect(await unschedulable('needs-immediate')).toBe('0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.');
    await client.create(RESOURCES.persistentvolumes, volume('external-made', 'external'));
    expect(await nodeOf('needs-immediate')).toMatch(/^node-[12]$/);
    expect((await getClaim('immediate')).spec?.volumeName).toBe('external-made');
  });

  it('picks a node allowed by the class topology for a WaitForFirstConsumer claim, has the volume provisioned there, and keeps later pods there', async () => {
    await client.create(
      RESOURCES.storageclasses,
      storageClass('zone-b', HOST_PATH, 'WaitForFirstConsumer', {
        allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['b'] }] }],
      }),
    );
    await client.create(RESOURCES.persistentvolumeclaims, claim('late', 'zone-b'), NS);
    await client.create(RESOURCES.pods, pod('first-user', 'late'), NS);
    expect(await nodeOf('first-user')).toBe('node-2');

    const bound = await getClaim('late');
    expect(bound.status?.phase).toBe('Bound');
    expect(bound.metadata.annotations?.[ANNOTATION.SELECTED_NODE]).toBe('node-2');
    const provisioned = await client.get<PersistentVolume>(RESOURCES.persistentvolumes, bound.spec!.volumeName!);
    expect(provisioned.spec.nodeAffinity).toEqual(pinnedTo('kubernetes.io/hostname', ['node-2']));

    // Bound now: its volume's affinity pins every later user to node-2.
    for (const name of ['second-user', 'third-user']) await client.create(RESOURCES.pods, pod(name, 'late'), NS);
    expect([await nodeOf('second-user'), await nodeOf('third-user')]).toEqual(['node-2', 'node-2']);
  });

  it('pre-binds a free local volume usable from the chosen node, and says so when no volume or provisioning fits any node', async () => {
    await client.create(RESOURCES.storageclasses, storageClass('local', 'kubernetes.io/no-provisioner', 'WaitForFirstConsumer'));
    await client.create(RESOURCES.persistentvolumes, volume('local-on-1', 'local', pinnedTo('kubernetes.io/hostname', ['node-1'])));
    await client.create(RESOURCES.persistentvolumes, volume('local-small-on-2', 'local', pinnedTo('kubernetes.io/hostname', ['node-2']), '100Mi'));
    await waitFor('the local volumes to be Available', async () =>
      (await client.list<PersistentVolume>(RESOURCES.persistentvolumes)).items
        .filter((pv) => pv.metadata.name!.startsWith('local-'))
        .every((pv) => pv.status?.phase === 'Available'),
    );
    await client.create(RESOURCES.persistentvolumeclaims, claim('local-data', 'local'), NS);
    await client.create(RESOURCES.pods, pod('local-user', 'local-data'), NS);
    expect(await nodeOf('local-user')).toBe('node-1');
    const bound = await getClaim('local-data');
    expect(bound.spec?.volumeName).toBe('local-on-1');
    expect(bound.status?.phase).toBe('Bound');
    expect((await client.get<PersistentVolume>(RESOURCES.persistentvolumes, 'local-on-1')).spec.claimRef).toMatchObject({
      name: 'local-data',
      uid: bound.metadata.uid,
    });

    // The only free volume left is too small, and the class cannot provision.
    await client.create(RESOURCES.persistentvolumeclaims, claim('local-more', 'local'), NS);
    await client.create(RESOURCES.pods, pod('wants-more', 'local-more'), NS);
    expect(await unschedulable('wants-more')).toBe("0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.");
    expect((await getClaim('local-more')).status?.phase).toBe('Pending');
  });

  it("rejects every node its bound volume's node affinity excludes", async () => {
    await client.create(RESOURCES.storageclasses, storageClass('far', 'kubernetes.io/no-provisioner', 'Immediate'));
    await client.create(RESOURCES.persistentvolumes, volume('far-away', 'far', pinnedTo('topology.kubernetes.io/zone', ['mars'])));
    await client.create(RESOURCES.persistentvolumeclaims, claim('far-data', 'far'), NS);
    await waitFor('the claim to be Bound', async () => (await getClaim('far-data')).status?.phase === 'Bound');
    await client.create(RESOURCES.pods, pod('far-user', 'far-data'), NS);
    expect(await unschedulable('far-user')).toBe('0/2 nodes are available: 2 node(s) had volume node affinity conflict.');
  });

  it('gives up preBind after bindTimeoutSeconds when nobody provisions, and the pod is not bound', async () => {
    await client.create(RESOURCES.storageclasses, storageClass('unserved', 'example.com/nobody', 'WaitForFirstConsumer'));
    await client.create(RESOURCES.persistentvolumeclaims, claim('unserved-data', 'unserved'), NS);
    await client.create(RESOURCES.pods, pod('unserved-user', 'unserved-data'), NS);
    const message = await unschedulable('unserved-user', 'timed out');
    expect(message).toBe('running PreBind plugin "VolumeBinding": binding volumes: timed out waiting for the condition');
    const asked = await getClaim('unserved-data');
    expect(asked.metadata.annotations?.[ANNOTATION.SELECTED_NODE]).toMatch(/^node-[12]$/);
    expect((await getPod('unserved-user')).spec.nodeName).toBeUndefined();
  });
});
