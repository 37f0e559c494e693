import { RESOURCES } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { ownerTypeOf, resolveResources, resourceId } from './resources.js';

describe('resolveResources', () => {
  it('accepts plural names with or without their group, once each', () => {
    expect(resolveResources(['pods', 'replicasets.apps', 'deployments', 'pods'])).toEqual([RESOURCES.pods, RESOURCES.replicasets, RESOURCES.deployments]);
  });

  it('names the unknown resource and lists the known ones', () => {
    expect(() => resolveResources(['pods', 'widgets'])).toThrow(
      expect.objectContaining({ code: 'SKIFF_ERR_GC_UNKNOWN_RESOURCE', message: expect.stringContaining('option "resources" names "widgets"') }),
    );
  });
});

describe('ownerTypeOf', () => {
  it('matches an owner reference by apiVersion and kind', () => {
    expect(ownerTypeOf({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x', uid: 'u' })).toBe(RESOURCES.replicasets);
    expect(ownerTypeOf({ apiVersion: 'v1', kind: 'Node', name: 'n', uid: 'u' })).toBe(RESOURCES.nodes);
  });

  it('knows nothing of other versions or kinds', () => {
    expect(ownerTypeOf({ apiVersion: 'apps/v1beta1', kind: 'ReplicaSet', name: 'x', uid: 'u' })).toBeUndefined();
    expect(ownerTypeOf({ apiVersion: 'example.com/v1', kind: 'Widget', name: 'x', uid: 'u' })).toBeUndefined();
  });

  it('ids resources the way options name them', () => {
    expect([resourceId(RESOURCES.pods), resourceId(RESOURCES.replicasets)]).toEqual(['pods', 'replicasets.apps']);
  });
});
