import { describe, expect, it } from 'vitest';
import {
  claimName,
  endOrdinal,
  identityMatches,
  inOrdinalRange,
  isMemberOf,
  newMemberPod,
  parseMemberName,
  storageMatches,
  updateIdentity,
  updateStorage,
} from './identity.js';
import { CONTROLLER_REF, member, testSet } from './test-objects.js';

describe('member names', () => {
  it('splits a name at its last dash into parent and ordinal', () => {
    expect(parseMemberName('web-0')).toEqual({ parent: 'web', ordinal: 0 });
    expect(parseMemberName('my-db-2-12')).toEqual({ parent: 'my-db-2', ordinal: 12 });
    expect(parseMemberName('web')).toEqual({ parent: '', ordinal: -1 });
    expect(parseMemberName('web-abc')).toEqual({ parent: '', ordinal: -1 });
    expect(parseMemberName('web-99999999999')).toEqual({ parent: 'web', ordinal: -1 });
  });

  it('counts pods named after the set as members, whatever their ordinal', () => {
    const set = testSet();
    expect(isMemberOf(set, member(set, 7))).toBe(true);
    expect(isMemberOf(set, { metadata: { name: 'webby-0' }, spec: { containers: [] } })).toBe(false);
    expect(isMemberOf(set, { metadata: { name: 'web-x' }, spec: { containers: [] } })).toBe(false);
  });

  it('keeps the ordinals from spec.ordinals.start for spec.replicas pods', () => {
    const set = testSet({ replicas: 3, ordinals: { start: 5 } });
    expect(endOrdinal(set)).toBe(7);
    expect([4, 5, 7, 8].map((ordinal) => inOrdinalRange(set, member(set, ordinal)))).toEqual([false, true, true, false]);
  });
});

describe('a new member pod', () => {
  it('has the stable name, hostname, subdomain, identity and revision labels, owner and generateName', () => {
    const set = testSet();
    set.spec.template.metadata!.annotations = { note: 'kept' };
    const pod = newMemberPod(set, 2, 'web-5d8f7c9b4', CONTROLLER_REF);
    expect(pod.metadata).toEqual({
      name: 'web-2',
      generateName: 'web-',
      namespace: 'default',
      labels: { app: 'web', 'statefulset.kubernetes.io/pod-name': 'web-2', 'apps.kubernetes.io/pod-index': '2', 'controller-revision-hash': 'web-5d8f7c9b4' },
      annotations: { note: 'kept' },
      ownerReferences: [CONTROLLER_REF],
    });
    expect(pod.spec.hostname).toBe('web-2');
    expect(pod.spec.subdomain).toBe('nginx');
    expect(identityMatches(set, pod)).toBe(true);
  });

  it('mounts one claim per volumeClaimTemplate, replacing a template volume of the same name', () => {
    const set = testSet({
      volumeClaimTemplates: [
        { metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'] } },
        { metadata: { name: 'logs' }, spec: { accessModes: ['ReadWriteOnce'] } },
      ],
    });
    set.spec.template.spec.volumes = [
      { name: 'www', emptyDir: {} },
      { name: 'config', configMap: { name: 'web' } },
    ];
    const pod = newMemberPod(set, 1, 'web-1', CONTROLLER_REF);
    expect(pod.spec.volumes).toEqual([
      { name: 'www', persistentVolumeClaim: { claimName: 'www-web-1' } },
      { name: 'logs', persistentVolumeClaim: { claimName: 'logs-web-1' } },
      { name: 'config', configMap: { name: 'web' } },
    ]);
    expect(storageMatches(set, pod)).toBe(true);
    expect(claimName(set, 'www', 1)).toBe('www-web-1');
  });

  it('leaves the subdomain out when the set names no Service', () => {
    const pod = newMemberPod(testSet({ serviceName: undefined }), 0, 'web-1', CONTROLLER_REF);
    expect(pod.spec.subdomain).toBeUndefined();
  });
});

describe('identity and storage of an existing pod', () => {
  it('notices lost identity labels and claim volumes, and restores them', () => {
    const set = testSet({ volumeClaimTemplates: [{ metadata: { name: 'www' }, spec: {} }] });
    const pod = member(set, 1);
    delete pod.metadata.labels!['apps.kubernetes.io/pod-index'];
    pod.spec.volumes = [];
    expect(identityMatches(set, pod)).toBe(false);
    expect(storageMatches(set, pod)).toBe(false);
    updateIdentity(set, pod);
    updateStorage(set, pod);
    expect(identityMatches(set, pod)).toBe(true);
    expect(storageMatches(set, pod)).toBe(true);
  });
});
