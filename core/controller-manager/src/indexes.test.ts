import type { KubeObject } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { byControllerUid, byOwnerUid, orphansByNamespace } from './indexes.js';

const owned: KubeObject = {
  metadata: {
    namespace: 'shop',
    ownerReferences: [
      { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid' },
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-uid', controller: true },
    ],
  },
};
const orphan: KubeObject = { metadata: { namespace: 'shop', ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid' }] } };

describe('controller indexes', () => {
  it('files an object under its controller only', () => {
    expect(byControllerUid(owned)).toEqual(['rs-uid']);
    expect(byControllerUid(orphan)).toEqual([]);
  });

  it('files an object under every owner', () => {
    expect(byOwnerUid(owned)).toEqual(['node-uid', 'rs-uid']);
    expect(byOwnerUid({ metadata: {} })).toEqual([]);
  });

  it('files objects without a controller under their namespace, as adoption candidates', () => {
    expect(orphansByNamespace(orphan)).toEqual(['shop']);
    expect(orphansByNamespace(owned)).toEqual([]);
    expect(orphansByNamespace({ metadata: { name: 'cluster-scoped' } })).toEqual(['']);
  });
});
