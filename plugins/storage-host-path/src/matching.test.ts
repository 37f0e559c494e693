import type { PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { claimsOfPod, defaultStorageClass, findVolumeForClaim, isClaimInUse, provisionedVolume, unsatisfiedBecause, unscheduledPodsOf } from './matching.js';
import { ANNOTATION } from './names.js';

const claim = (spec: Partial<PersistentVolumeClaim['spec']> = {}, name = 'data'): PersistentVolumeClaim => ({
  metadata: { name, namespace: 'ns', uid: 'uid-1', resourceVersion: '7' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'manual', ...spec },
});

const volume = (name: string, storage: string, extra: Partial<PersistentVolume['spec']> = {}, labels?: Record<string, string>): PersistentVolume => ({
  metadata: { name, ...(labels && { labels }) },
  spec: { capacity: { storage }, accessModes: ['ReadWriteOnce'], storageClassName: 'manual', hostPath: { path: `/x/${name}` }, ...extra },
  status: { phase: 'Available' },
});

const names = (found: PersistentVolume | undefined) => found?.metadata.name;

describe('unsatisfiedBecause', () => {
  it('accepts a volume at least as big, of the same class and mode, offering every requested access mode', () => {
    expect(unsatisfiedBecause(claim(), volume('v', '1Gi', { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] }))).toBeUndefined();
    expect(unsatisfiedBecause(claim({ resources: { requests: { storage: '1G' } } }), volume('v', '1Gi'))).toBeUndefined();
  });

  it('says why a volume does not fit', () => {
    expect(unsatisfiedBecause(claim(), volume('v', '1000Mi'))).toBe('requested PV is too small');
    expect(unsatisfiedBecause(claim({ volumeMode: 'Block' }), volume('v', '1Gi'))).toBe('incompatible volumeMode');
    expect(unsatisfiedBecause(claim({ storageClassName: 'fast' }), volume('v', '1Gi'))).toBe('storageClassName does not match');
    expect(unsatisfiedBecause(claim({ accessModes: ['ReadWriteMany'] }), volume('v', '1Gi'))).toBe('incompatible accessMode');
  });

  it('treats no class and the empty class as the same', () => {
    expect(unsatisfiedBecause(claim({ storageClassName: '' }), volume('v', '1Gi', { storageClassName: undefined }))).toBeUndefined();
    expect(unsatisfiedBecause(claim({ storageClassName: undefined }), volume('v', '1Gi', { storageClassName: '' }))).toBeUndefined();
  });
});

describe('findVolumeForClaim', () => {
  it('picks the smallest volume that is big enough, ties by name', () => {
    const volumes = [volume('big', '10Gi'), volume('b', '2Gi'), volume('tiny', '500Mi'), volume('a', '2Gi')];
    expect(names(findVolumeForClaim(claim({ resources: { requests: { storage: '1500Mi' } } }), volumes))).toBe('a');
    expect(names(findVolumeForClaim(claim({ resources: { requests: { storage: '20Gi' } } }), volumes))).toBeUndefined();
  });

  it('skips volumes held by another claim, being deleted, Released or Failed', () => {
    const volumes = [
      volume('taken', '1Gi', { claimRef: { namespace: 'ns', name: 'other', uid: 'u2' } }),
      { ...volume('going', '1Gi'), metadata: { name: 'going', deletionTimestamp: '2024-01-01T00:00:00Z' } },
      { ...volume('released', '1Gi'), status: { phase: 'Released' as const } },
      { ...volume('failed', '1Gi'), status: { phase: 'Failed' as const } },
      volume('free', '3Gi'),
    ];
    expect(names(findVolumeForClaim(claim(), volumes))).toBe('free');
  });

  it('prefers a volume pre-bound to the claim, by name and uid or by name alone, over a smaller free one', () => {
    const free = volume('free', '1Gi');
    expect(names(findVolumeForClaim(claim(), [free, volume('mine', '5Gi', { claimRef: { namespace: 'ns', name: 'data', uid: 'uid-1' } })]))).toBe('mine');
    expect(names(findVolumeForClaim(claim(), [free, volume('reserved', '5Gi', { claimRef: { namespace: 'ns', name: 'data' } })]))).toBe('reserved');
    // Pre-bound to an earlier claim of the same name: not this one.
    expect(names(findVolumeForClaim(claim(), [free, volume('stale', '5Gi', { claimRef: { namespace: 'ns', name: 'data', uid: 'old' } })]))).toBe('free');
  });

  it('matches the claim selector against volume labels', () => {
    const volumes = [volume('plain', '1Gi'), volume('ssd', '4Gi', {}, { disk: 'ssd' }), volume('hdd', '2Gi', {}, { disk: 'hdd' })];
    expect(names(findVolumeForClaim(claim({ selector: { matchLabels: { disk: 'ssd' } } }), volumes))).toBe('ssd');
    expect(names(findVolumeForClaim(claim({ selector: { matchExpressions: [{ key: 'disk', operator: 'Exists' }] } }), volumes))).toBe('hdd');
  });

  it('gives a WaitForFirstConsumer claim only a volume pre-bound to it (the scheduler chooses free ones)', () => {
    const free = volume('free', '1Gi');
    expect(names(findVolumeForClaim(claim(), [free], true))).toBeUndefined();
    expect(names(findVolumeForClaim(claim(), [free, volume('chosen', '5Gi', { claimRef: { namespace: 'ns', name: 'data', uid: 'uid-1' } })], true))).toBe(
      'chosen',
    );
  });
});

describe('defaultStorageClass', () => {
  const storageClass = (name: string, created: string, annotation?: string): StorageClass => ({
    metadata: { name, creationTimestamp: created, ...(annotation && { annotations: { [annotation]: 'true' } }) },
    provisioner: 'x',
  });

  it('is the newest class annotated as default (either annotation), none when none is', () => {
    expect(defaultStorageClass([storageClass('plain', '2024-01-01T00:00:00Z')])).toBeUndefined();
    const classes = [
      storageClass('old', '2024-01-01T00:00:00Z', ANNOTATION.IS_DEFAULT_CLASS),
      storageClass('newer', '2024-02-01T00:00:00Z', ANNOTATION.IS_DEFAULT_CLASS_BETA),
      storageClass('newest-not-default', '2024-03-01T00:00:00Z'),
    ];
    expect(defaultStorageClass(classes)?.metadata.name).toBe('newer');
  });
});

describe('claims in use', () => {
  const pod = (name: string, claimName: string, phase?: string, namespace = 'ns'): Pod => ({
    metadata: { name, namespace },
    spec: { containers: [], volumes: [{ name: 'scratch' }, { name: 'data', persistentVolumeClaim: { claimName } }] },
    ...(phase && { status: { phase } }),
  });

  it('lists the claims a pod mounts', () => {
    expect(claimsOfPod(pod('p', 'data'))).toEqual(['data']);
  });

  it('counts pods that have not finished, in the claim namespace', () => {
    expect(isClaimInUse(claim(), [pod('p', 'data', 'Running')])).toBe(true);
    expect(isClaimInUse(claim(), [pod('p', 'data')])).toBe(true);
    expect(isClaimInUse(claim(), [pod('p', 'data', 'Succeeded'), pod('q', 'data', 'Failed')])).toBe(false);
    expect(isClaimInUse(claim(), [pod('p', 'data', 'Running', 'elsewhere'), pod('q', 'other', 'Running')])).toBe(false);
  });

  it('names the unfinished pods mounting the claim that have no node yet', () => {
    const placed = { ...pod('placed', 'data', 'Running'), spec: { ...pod('placed', 'data').spec, nodeName: 'node-1' } };
    expect(unscheduledPodsOf(claim(), [pod('a', 'data'), placed, pod('done', 'data', 'Succeeded'), pod('b', 'data', 'Pending')])).toEqual(['a', 'b']);
  });
});

describe('provisionedVolume', () => {
  it('is a host directory of the claim size and modes, pre-bound to the claim, with the class policy', () => {
    const storageClass: StorageClass = { metadata: { name: 'standard' }, provisioner: 'skiff.dev/host-path', reclaimPolicy: 'Retain', mountOptions: ['ro'] };
    expect(provisionedVolume(claim({ accessModes: ['ReadWriteMany'] }), storageClass, '/data/volumes/pvc-uid-1', 'skiff.dev/host-path')).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: {
        name: 'pvc-uid-1',
        annotations: { [ANNOTATION.PROVISIONED_BY]: 'skiff.dev/host-path', [ANNOTATION.BOUND_BY_CONTROLLER]: 'yes' },
      },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteMany'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: 'standard',
        volumeMode: 'Filesystem',
        claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'data', uid: 'uid-1', resourceVersion: '7' },
        hostPath: { path: '/data/volumes/pvc-uid-1', type: 'DirectoryOrCreate' },
        mountOptions: ['ro'],
      },
    });
  });

  it('is pinned to the node the scheduler selected, by its hostname label', () => {
    const pinned = provisionedVolume(claim(), { metadata: { name: 's' }, provisioner: 'p' }, '/v', 'p', 'node-2');
    expect(pinned.spec.nodeAffinity).toEqual({
      required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-2'] }] }] },
    });
    expect(provisionedVolume(claim(), { metadata: { name: 's' }, provisioner: 'p' }, '/v', 'p').spec.nodeAffinity).toBeUndefined();
  });

  it('takes Delete when the class names no policy', () => {
    expect(provisionedVolume(claim(), { metadata: { name: 's' }, provisioner: 'p' }, '/v', 'p').spec.persistentVolumeReclaimPolicy).toBe('Delete');
  });
});
