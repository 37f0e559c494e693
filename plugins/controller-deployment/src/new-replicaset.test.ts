import { RESOURCES } from '@skiff/api';
import { newControllerRef } from '@skiff/controller-manager';
import { describe, expect, it } from 'vitest';
import { POD_TEMPLATE_HASH_LABEL } from './names.js';
import { buildNewReplicaSet, equalIgnoreHash, findNewReplicaSet } from './new-replicaset.js';
import { testDeployment, testReplicaSet } from './test-objects.js';

describe('buildNewReplicaSet', () => {
  it('names it <deployment>-<hash> and adds the hash to its labels, selector and template', () => {
    const d = testDeployment({ minReadySeconds: 5 });
    const ref = newControllerRef(d, RESOURCES.deployments);
    const rs = buildNewReplicaSet(d, '5d8f7b9c6', ref);
    expect(rs.metadata).toEqual({
      name: 'web-5d8f7b9c6',
      namespace: 'default',
      labels: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: '5d8f7b9c6' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-uid', controller: true, blockOwnerDeletion: true }],
    });
    expect(rs.spec.selector).toEqual({ matchLabels: { app: 'web', [POD_TEMPLATE_HASH_LABEL]: '5d8f7b9c6' } });
    expect(rs.spec.template.metadata?.labels).toEqual({ app: 'web', [POD_TEMPLATE_HASH_LABEL]: '5d8f7b9c6' });
    expect(rs.spec.minReadySeconds).toBe(5);
    expect(d.spec.template.metadata?.labels).toEqual({ app: 'web' });
  });
});

describe('equalIgnoreHash and findNewReplicaSet', () => {
  it('treats templates differing only in the hash label as equal', () => {
    const d = testDeployment();
    const rs = buildNewReplicaSet(d, 'abc', newControllerRef(d, RESOURCES.deployments));
    expect(equalIgnoreHash(rs.spec.template, d.spec.template)).toBe(true);
    const changed = structuredClone(d.spec.template);
    changed.spec.containers[0]!.image = 'nginx:1.26';
    expect(equalIgnoreHash(rs.spec.template, changed)).toBe(false);
  });

  it('finds the oldest ReplicaSet running the current template', () => {
    const d = testDeployment();
    const other = testReplicaSet('web-other', 1, { created: '2024-01-01T00:00:00Z' });
    other.spec.template.spec.containers[0]!.image = 'busybox';
    const current = buildNewReplicaSet(d, 'abc', newControllerRef(d, RESOURCES.deployments));
    current.metadata.creationTimestamp = '2024-01-03T00:00:00Z';
    const duplicate = { ...structuredClone(current), metadata: { ...current.metadata, name: 'web-dup', creationTimestamp: '2024-01-02T00:00:00Z' } };
    expect(findNewReplicaSet(d, [other, current, duplicate])?.metadata.name).toBe('web-dup');
    expect(findNewReplicaSet(d, [other])).toBeUndefined();
  });
});
