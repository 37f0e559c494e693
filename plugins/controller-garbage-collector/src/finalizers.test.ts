import { describe, expect, it } from 'vitest';
import { hasFinalizer, removeFinalizerPatch } from './finalizers.js';

describe('finalizers', () => {
  const owner = { metadata: { uid: 'd-uid', resourceVersion: '12', finalizers: ['example.com/keep', 'orphan'] } };

  it('checks for a finalizer', () => {
    expect(hasFinalizer(owner, 'orphan')).toBe(true);
    expect(hasFinalizer(owner, 'foregroundDeletion')).toBe(false);
    expect(hasFinalizer({ metadata: {} }, 'orphan')).toBe(false);
  });

  it('removes one finalizer, keeping the others, guarded by uid and resourceVersion', () => {
    expect(removeFinalizerPatch(owner, 'orphan')).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'd-uid' },
      { op: 'test', path: '/metadata/resourceVersion', value: '12' },
      { op: 'replace', path: '/metadata/finalizers', value: ['example.com/keep'] },
    ]);
  });

  it('removes the field with the last finalizer', () => {
    expect(removeFinalizerPatch({ metadata: { uid: 'u', resourceVersion: '3', finalizers: ['orphan'] } }, 'orphan').at(-1)).toEqual({
      op: 'remove',
      path: '/metadata/finalizers',
    });
  });
});
