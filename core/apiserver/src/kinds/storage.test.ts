import type { KubeObject } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { STORAGE_KINDS } from './storage.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { definition, create, fields, cells } = kindHarness(STORAGE_KINDS);

describe('storage classes', () => {
  const body = { metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'rancher.io/local-path' };

  it('defaults the reclaim policy and binding mode, and marks the default class', () => {
    const sc = create('storageclasses', body);
    expect([sc.reclaimPolicy, sc.volumeBindingMode]).toEqual(['Delete', 'Immediate']);
    expect(cells('storageclasses', sc)).toEqual(['standard (default)', 'rancher.io/local-path', 'Delete', 'Immediate', false, '3h5m']);
    expect(definition('storageclasses').shortNames).toEqual(['sc']);
  });

  it('rejects Recycle and changes to what provisioning depends on', () => {
    expect(fields('storageclasses', { ...body, reclaimPolicy: 'Recycle' })).toEqual([
      'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
    ]);
    const old = create('storageclasses', { ...body, parameters: { type: 'ssd' } });
    const update = {
      ...structuredClone(old),
      provisioner: 'other.io/x',
      parameters: { type: 'hdd' },
      reclaimPolicy: 'Retain',
      volumeBindingMode: 'WaitForFirstConsumer',
    };
    expect(fields('storageclasses', update, old)).toEqual([
      'parameters: Forbidden: updates to parameters are forbidden.',
      'provisioner: Forbidden: updates to provisioner are forbidden.',
      'reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.',
      'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
    ]);
    expect(fields('storageclasses', { ...structuredClone(old), allowVolumeExpansion: true }, old)).toEqual([]);
  });
});

describe('CSI drivers and nodes', () => {
  it('defaults a CSI driver and prints it', () => {
    const driver = create('csidrivers', { metadata: { name: 'hostpath.csi.k8s.io' }, spec: { tokenRequests: [{ audience: 'vault' }] } });
    expect(driver.spec).toEqual({
      attachRequired: true,
      podInfoOnMount: false,
      volumeLifecycleModes: ['Persistent'],
      storageCapacity: false,
      fsGroupPolicy: 'ReadWriteOnceWithFSType',
      tokenRequests: [{ audience: 'vault' }],
      requiresRepublish: false,
      seLinuxMount: false,
    });
    expect(cells('csidrivers', driver)).toEqual(['hostpath.csi.k8s.io', true, false, false, 'vault', false, 'Persistent', '3h5m']);
    expect(fields('csidrivers', { ...structuredClone(driver), spec: { ...(driver.spec as object), attachRequired: false } }, driver)).toEqual([
      'spec.attachRequired: Invalid value: false: field is immutable',
    ]);
  });

  it('prints a CSI node with its driver count and requires node IDs', () => {
    const node = create('csinodes', { metadata: { name: 'node-1' }, spec: { drivers: [{ name: 'hostpath.csi.k8s.io', nodeID: 'node-1' }] } });
    expect(cells('csinodes', node)).toEqual(['node-1', 1, '3h5m']);
    expect(fields('csinodes', { metadata: { name: 'node-1' }, spec: { drivers: [{ name: 'x.csi.io' }] } })).toEqual(['spec.drivers[0].nodeID: Required value']);
  });
});

describe('volume attachments and attribute classes', () => {
  const attachment = { metadata: { name: 'csi-123' }, spec: { attacher: 'hostpath.csi.k8s.io', nodeName: 'node-1', source: { persistentVolumeName: 'pv-1' } } };

  it('prints a volume attachment and keeps its spec', () => {
    const va = create('volumeattachments', attachment);
    expect(va.status).toEqual({});
    expect(cells('volumeattachments', va)).toEqual(['csi-123', 'hostpath.csi.k8s.io', 'pv-1', 'node-1', false, '3h5m']);
    const moved = structuredClone(va) as KubeObject & { spec: { nodeName: string } };
    moved.spec.nodeName = 'node-2';
    expect(fields('volumeattachments', moved, va)).toHaveLength(1);
    expect(fields('volumeattachments', moved, va)[0]).toMatch(/^spec: Invalid value: .*: field is immutable$/);
    expect(fields('volumeattachments', { ...attachment, spec: { attacher: 'a.io', nodeName: 'node-1', source: {} } })).toEqual([
      'spec.source: Invalid value: {}: must specify exactly one of inlineVolumeSpec and persistentVolumeName',
    ]);
  });

  it('requires a volume attributes class driver and parameters, fixed once set', () => {
    const vac = create('volumeattributesclasses', { metadata: { name: 'gold' }, driverName: 'pd.csi.storage.gke.io', parameters: { iops: '3000' } });
    expect(cells('volumeattributesclasses', vac)).toEqual(['gold', 'pd.csi.storage.gke.io', '3h5m']);
    expect(fields('volumeattributesclasses', { metadata: { name: 'x' } })).toEqual(['driverName: Required value', 'parameters: Required value']);
    expect(fields('volumeattributesclasses', { ...structuredClone(vac), driverName: 'other.io', parameters: { iops: '6000' } }, vac)).toEqual([
      'driverName: Invalid value: "other.io": field is immutable',
      'parameters: Forbidden: updates to parameters are forbidden.',
    ]);
  });

  it('prints a CSI storage capacity', () => {
    const capacity = create('csistoragecapacities', {
      metadata: { name: 'csisc-1', namespace: 'kube-system' },
      storageClassName: 'standard',
      capacity: '10Gi',
    });
    expect(cells('csistoragecapacities', capacity)).toEqual(['csisc-1', 'standard', '10Gi']);
  });
});
