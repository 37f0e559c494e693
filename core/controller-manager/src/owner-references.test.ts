import { RESOURCES, type KubeObject } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { controllerRefOf, newControllerRef, ownerReferencesPatch, resolveControllerRef } from './owner-references.js';

const rs: KubeObject = { metadata: { name: 'web-5d8f', namespace: 'default', uid: 'rs-uid' } };

describe('owner references', () => {
  it('builds the controller reference Kubernetes controllers put on what they own', () => {
    expect(newControllerRef(rs, RESOURCES.replicasets)).toEqual({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: 'web-5d8f',
      uid: 'rs-uid',
      controller: true,
      blockOwnerDeletion: true,
    });
  });

  it('finds the controller among several owners', () => {
    const pod: KubeObject = {
      metadata: {
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid' },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-uid', controller: true },
        ],
      },
    };
    expect(controllerRefOf(pod)?.uid).toBe('rs-uid');
    expect(controllerRefOf({ metadata: {} })).toBeUndefined();
  });

  it('guards reference patches with the uid and resourceVersion that were seen', () => {
    const pod: KubeObject = { metadata: { uid: 'pod-uid', resourceVersion: '42' } };
    const ref = newControllerRef(rs, RESOURCES.replicasets);
    expect(ownerReferencesPatch(pod, [ref])).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'pod-uid' },
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'add', path: '/metadata/ownerReferences', value: [ref] },
    ]);
  });

  it('removes the field when the last reference goes, and leaves an absent field alone', () => {
    const owned: KubeObject = { metadata: { uid: 'u', resourceVersion: '7', ownerReferences: [newControllerRef(rs, RESOURCES.replicasets)] } };
    expect(ownerReferencesPatch(owned, []).at(-1)).toEqual({ op: 'remove', path: '/metadata/ownerReferences' });
    expect(ownerReferencesPatch({ metadata: { uid: 'u', resourceVersion: '7' } }, [])).toHaveLength(2);
  });

  it('resolves a controller reference to the cached owner only while it names that very object', () => {
    const cache = new Map([['default/web-5d8f', rs]]);
    const ref = newControllerRef(rs, RESOURCES.replicasets);
    expect(resolveControllerRef(cache, RESOURCES.replicasets, 'default', ref)).toBe(rs);
    expect(resolveControllerRef(cache, RESOURCES.replicasets, 'default', undefined)).toBeUndefined();
    expect(resolveControllerRef(cache, RESOURCES.replicasets, 'other', ref)).toBeUndefined();
    expect(resolveControllerRef(cache, RESOURCES.replicasets, 'default', { ...ref, uid: 'successor-uid' })).toBeUndefined();
    expect(resolveControllerRef(cache, RESOURCES.replicasets, 'default', { ...ref, kind: 'Deployment' })).toBeUndefined();
    expect(resolveControllerRef(cache, RESOURCES.replicasets, 'default', { ...ref, apiVersion: 'extensions/v1beta1' })).toBeUndefined();
  });

  it('resolves an owner of the core group, whose apiVersion has no group part', () => {
    const rc: KubeObject = { metadata: { name: 'web', namespace: 'default', uid: 'rc-uid' } };
    const ref = newControllerRef(rc, RESOURCES.replicationcontrollers);
    expect(ref.apiVersion).toBe('v1');
    expect(resolveControllerRef(new Map([['default/web', rc]]), RESOURCES.replicationcontrollers, 'default', ref)).toBe(rc);
    expect(
      resolveControllerRef(new Map([['default/web', rc]]), RESOURCES.replicationcontrollers, 'default', { ...ref, apiVersion: 'apps/v1' }),
    ).toBeUndefined();
  });
});
