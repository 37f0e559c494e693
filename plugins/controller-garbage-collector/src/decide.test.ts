import type { KubeObject } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { decideForDependent, type OwnerState } from './decide.js';

function dependent(owners: string[], finalizers?: string[]): KubeObject {
  return {
    metadata: {
      name: 'web-abc-x1',
      uid: 'pod-uid',
      finalizers,
      ownerReferences: owners.map((uid) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: uid, uid })),
    },
  };
}

const states = (entries: Record<string, OwnerState>) => new Map(Object.entries(entries));

describe('decideForDependent', () => {
  it('keeps a dependent whose owners all exist', () => {
    expect(decideForDependent(dependent(['a', 'b']), states({ a: 'exists', b: 'exists' }), false)).toEqual({ action: 'keep' });
  });

  it('deletes in the background a dependent whose every owner is gone', () => {
    expect(decideForDependent(dependent(['a', 'b']), states({ a: 'absent', b: 'absent' }), false)).toEqual({
      action: 'delete',
      propagationPolicy: 'Background',
    });
  });

  it('only drops references to vanished owners while another owner remains', () => {
    expect(decideForDependent(dependent(['a', 'b', 'c']), states({ a: 'absent', b: 'exists', c: 'waiting' }), false)).toEqual({
      action: 'removeOwnerReferences',
      uids: ['a', 'c'],
    });
  });

  it('deletes in the foreground a dependent with dependents of its own whose owner waits on it', () => {
    expect(decideForDependent(dependent(['a']), states({ a: 'waiting' }), true)).toEqual({ action: 'delete', propagationPolicy: 'Foreground' });
    expect(decideForDependent(dependent(['a']), states({ a: 'waiting' }), false)).toEqual({ action: 'delete', propagationPolicy: 'Background' });
  });

  it('honours the dependent’s own orphan or foreground finalizer', () => {
    expect(decideForDependent(dependent(['a'], ['orphan']), states({ a: 'absent' }), false)).toEqual({ action: 'delete', propagationPolicy: 'Orphan' });
    expect(decideForDependent(dependent(['a'], ['foregroundDeletion']), states({ a: 'absent' }), false)).toEqual({
      action: 'delete',
      propagationPolicy: 'Foreground',
    });
  });

  it('assumes an owner it was told nothing about still exists', () => {
    expect(decideForDependent(dependent(['a']), states({}), false)).toEqual({ action: 'keep' });
    expect(decideForDependent({ metadata: { name: 'lonely' } }, states({}), false)).toEqual({ action: 'keep' });
  });
});
