import type { PersistentVolume, PersistentVolumeClaim } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { findMatchingVolume, isClaimFullyBound, podClaimRefs, volumeBoundToClaim } from './claims.js';
import { ANNOTATION } from './names.js';

const claim = (spec: Partial<PersistentVolumeClaim['spec']> = {}): PersistentVolumeClaim => ({
  metadata: { name: 'data', namespace: 'ns', uid: 'uid-1', resourceVersion: '5' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'local', ...spec },
});

const volume = (name: string, storage: string, spec: Partial<PersistentVolume['spec']> = {}, phase = 'Available'): PersistentVolume => ({
  metadata: { name, resourceVersion: '9' },
  spec: { capacity: { storage }, accessModes: ['ReadWriteOnce'], storageClassName: 'local', hostPath: { path: `/v/${name}` }, ...spec },
  status: { phase },
});

const onNode = (hostname: string) => ({
  required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [hostname] }] }] },
});
const node1 = { 'kubernetes.io/hostname': 'node-1' };
const none = new Set<string>();

describe('findMatchingVolume', () => {
  it('takes the smallest Available volume of the class that is big enough, usable from the node and not chosen already', () => {
    const volumes = [
      volume('big', '10Gi'),
      volume('tiny', '100Mi'),
      volume('elsewhere', '1Gi', { nodeAffinity: onNode('node-2') }),
      volume('here', '2Gi', { nodeAffinity: onNode('node-1') }),
      volume('released', '1Gi', {}, 'Released'),
      volume('other-class', '1Gi', { storageClassName: 'fast' }),
      volume('block', '1Gi', { volumeMode: 'Block' }),
      volume('rwx-only', '1Gi', { accessModes: ['ReadWriteMany'] }),
    ];
    expect(findMatchingVolume(claim(), volumes, node1, none)?.metadata.name).toBe('here');
    expect(findMatchingVolume(claim(), volumes, node1, new Set(['here']))?.metadata.name).toBe('big');
    expect(findMatchingVolume(claim(), volumes, { 'kubernetes.io/hostname': 'node-2' }, none)?.metadata.name).toBe('elsewhere');
  });

  it('prefers a volume pre-bound to the claim, and then only if it fits the node', () => {
    const mine = volume('mine', '5Gi', { claimRef: { namespace: 'ns', name: 'data', uid: 'uid-1' }, nodeAffinity: onNode('node-2') });
    const free = volume('free', '1Gi');
    expect(findMatchingVolume(claim(), [free, mine], { 'kubernetes.io/hostname': 'node-2' }, none)?.metadata.name).toBe('mine');
    expect(findMatchingVolume(claim(), [free, mine], node1, none)).toBeUndefined();
    const others = volume('others', '1Gi', { claimRef: { namespace: 'ns', name: 'someone-else' } });
    expect(findMatchingVolume(claim(), [others], node1, none)).toBeUndefined();
  });

  it("honours the claim's selector", () => {
    const volumes = [volume('plain', '1Gi'), { ...volume('ssd', '2Gi'), metadata: { name: 'ssd', labels: { disk: 'ssd' } } }];
    expect(findMatchingVolume(claim({ selector: { matchLabels: { disk: 'ssd' } } }), volumes, node1, none)?.metadata.name).toBe('ssd');
  });
});

describe('claims', () => {
  it("lists a pod's claims, an ephemeral volume's by its generated name", () => {
    const pod = {
      metadata: { name: 'web-0', namespace: 'ns' },
      spec: {
        containers: [],
        volumes: [
          { name: 'scratch', emptyDir: {} },
          { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
          { name: 'cache', ephemeral: { volumeClaimTemplate: { spec: {} } } },
        ],
      },
    };
    expect(podClaimRefs(pod)).toEqual([
      { claimName: 'data', ephemeral: false },
      { claimName: 'web-0-cache', ephemeral: true },
    ]);
  });

  it('counts a claim as bound once it names its volume and the bind is completed', () => {
    expect(isClaimFullyBound(claim({ volumeName: 'v' }))).toBe(false);
    expect(isClaimFullyBound({ ...claim({ volumeName: 'v' }), metadata: { name: 'data', annotations: { [ANNOTATION.BIND_COMPLETED]: 'yes' } } })).toBe(true);
  });

  it('pre-binds a volume to the claim as the PV controller would, changing nothing when it already is', () => {
    const { volume: bound, changed } = volumeBoundToClaim(volume('v', '1Gi'), claim());
    expect(changed).toBe(true);
    expect(bound.spec.claimRef).toEqual({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'data', uid: 'uid-1', resourceVersion: '5' });
    expect(bound.metadata.annotations).toEqual({ [ANNOTATION.BOUND_BY_CONTROLLER]: 'yes' });
    expect(bound.metadata.resourceVersion).toBe('9');
    expect(volumeBoundToClaim(bound, claim()).changed).toBe(false);
    // Pre-bound by hand (by name only): the uid is filled in, but the binding stays the user's.
    const byHand = volumeBoundToClaim(volume('w', '1Gi', { claimRef: { namespace: 'ns', name: 'data' } }), claim());
    expect(byHand.changed).toBe(true);
    expect(byHand.volume.spec.claimRef?.uid).toBe('uid-1');
    expect(byHand.volume.metadata.annotations).toBeUndefined();
  });
});
