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

const child: KubeObject = { metadata: { name: 'child', uid: 'child-uid' } };
const states = (entries: Record<string, OwnerState>) => new Map(Object.entries(entries));

describe('decideForDependent', () => {
  it('keeps a dependent whose owners all exist', () => {
    expect(decideForDependent(dependent(['a', 'b']), states({ a: 'exists', b: 'exists' }), [])).toEqual({ action: 'keep' });
  });

  it('deletes in the background a dependent whose every owner is gone', () => {
    expect(decideForDependent(dependent(['a', 'b']), states({ a: 'absent', b: 'absent' }), [])).toEqual({
      action: 'delete',
      propagationPolicy: 'Background',
    });
  });

  it('only drops references to vanished owners while another owner remains', () => {
    expect(decideForDependent(dependent(['a', 'b', 'c']), states({ a: 'absent', b: 'exists', c: 'waiting' }), [])).toEqual({
      action: 'removeOwnerReferences',
      uids: ['a', 'c'],
    });
  });

  it('deletes in the foreground a dependent with dependents of its own whose owner waits on it', () => {
    expect(decideForDependent(dependent(['a']), states({ a: 'waiting' }), [child])).toEqual({ action: 'delete', propagationPolicy: 'Foreground' });
    expect(decideForDependent(dependent(['a']), states({ a: 'waiting' }), [])).toEqual({ action: 'delete', propagationPolicy: 'Background' });
  });

  it('makes its references non-blocking first when a dependent of its own is already deleting in the foreground (a cycle)', () => {
    const deleting: KubeObject = { metadata: { ...child.metadata, deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['foregroundDeletion'] } };
    expect(decideForDependent(dependent(['a']), states({ a: 'waiting' }), [child, deleting])).toEqual({
      action: 'delete',
      propagationPolicy: 'Foreground',
      unblockOwnerReferences: true,
    });
    // Only being deleted (not in the foreground) is no sign of a cycle.
    const leaving: KubeObject = { metadata: { ...child.metadata, deletionTimestamp: '2024-01-01T00:00:00Z' } };
    expect(decideForDependent(dependent(['a']), states({ a: 'waiting' }), [leaving])).toEqual({ action: 'delete', propagationPolicy: 'Foreground' });
  });

  it('honours the dependent’s own orphan or foreground finalizer', () => {
    expect(decideForDependent(dependent(['a'], ['orphan']), states({ a: 'absent' }), [])).toEqual({ action: 'delete', propagationPolicy: 'Orphan' });
    expect(decideForDependent(dependent(['a'], ['foregroundDeletion']), states({ a: 'absent' }), [])).toEqual({
      action: 'delete',
      propagationPolicy: 'Foreground',
    });
  });

  it('assumes an owner it was told nothing about still exists', () => {
    expect(decideForDependent(dependent(['a']), states({}), [])).toEqual({ action: 'keep' });
    expect(decideForDependent({ metadata: { name: 'lonely' } }, states({}), [])).toEqual({ action: 'keep' });
  });
});
