import { describe, expect, it } from 'vitest';
import { copyDeploymentAnnotations, maxRevision, parseRevision, setNewReplicaSetAnnotations } from './annotations.js';
import { ANNOTATION } from './names.js';
import { testDeployment, testReplicaSet } from './test-objects.js';

describe('revision annotations', () => {
  it('finds the highest revision among ReplicaSets', () => {
    expect(maxRevision([testReplicaSet('a', 0, { revision: 2 }), testReplicaSet('b', 0, { revision: 7 }), testReplicaSet('c', 0)])).toBe(7n);
    expect(maxRevision([])).toBe(0n);
  });

  it('reads revisions as int64, exactly, and ignores what is not one', () => {
    const adopted = testReplicaSet('adopted', 0, { annotations: { [ANNOTATION.REVISION]: '3546343826724305832' } });
    const next = maxRevision([adopted, testReplicaSet('b', 0, { revision: 12 })]) + 1n;
    expect(next.toString()).toBe('3546343826724305833');
    const rs = testReplicaSet('web-new', 0);
    setNewReplicaSetAnnotations(testDeployment(), rs, next, false);
    expect(rs.metadata.annotations?.[ANNOTATION.REVISION]).toBe('3546343826724305833');

    expect(parseRevision('9223372036854775807')).toBe(2n ** 63n - 1n);
    expect(parseRevision('-9223372036854775808')).toBe(-(2n ** 63n));
    expect(parseRevision('+5')).toBe(5n);
    for (const unreadable of ['9223372036854775808', '12abc', '1.5', '', ' 1', undefined]) expect(parseRevision(unreadable)).toBeUndefined();
    const garbled = testReplicaSet('garbled', 0, { annotations: { [ANNOTATION.REVISION]: '12abc' } });
    expect(maxRevision([garbled])).toBe(0n);
  });

  it('compares a rollback target with the new revision exactly, and keeps a revision that is no number', () => {
    const rs = testReplicaSet('web-v1', 0, { annotations: { [ANNOTATION.REVISION]: '9007199254740992' } });
    // Both are 9007199254740992 as numbers; as int64 the new revision is higher.
    expect(setNewReplicaSetAnnotations(testDeployment(), rs, 9007199254740993n, true)).toBe(true);
    expect(rs.metadata.annotations?.[ANNOTATION.REVISION]).toBe('9007199254740993');
    expect(rs.metadata.annotations?.[ANNOTATION.REVISION_HISTORY]).toBe('9007199254740992');

    const garbled = testReplicaSet('garbled', 0, { annotations: { [ANNOTATION.REVISION]: 'x' } });
    expect(setNewReplicaSetAnnotations(testDeployment(), garbled, 2n, true)).toBe(false);
    expect(garbled.metadata.annotations?.[ANNOTATION.REVISION]).toBe('x');
  });

  it('gives a new ReplicaSet the next revision and the replica annotations', () => {
    const d = testDeployment({ replicas: 4 });
    const rs = testReplicaSet('web-new', 0);
    expect(setNewReplicaSetAnnotations(d, rs, 3n, false)).toBe(true);
    expect(rs.metadata.annotations).toEqual({
      [ANNOTATION.REVISION]: '3',
      [ANNOTATION.DESIRED_REPLICAS]: '4',
      [ANNOTATION.MAX_REPLICAS]: '5',
    });
  });

  it('on a rollback, raises the revision of the old template and remembers the one it had', () => {
    const d = testDeployment();
    const rs = testReplicaSet('web-v1', 0, { revision: 1, annotations: { [ANNOTATION.REVISION_HISTORY]: '0' } });
    expect(setNewReplicaSetAnnotations(d, rs, 4n, true)).toBe(true);
    expect(rs.metadata.annotations?.[ANNOTATION.REVISION]).toBe('4');
    expect(rs.metadata.annotations?.[ANNOTATION.REVISION_HISTORY]).toBe('0,1');
  });

  it('leaves a ReplicaSet that is already the newest revision alone', () => {
    const rs = testReplicaSet('web', 3, { revision: 5 });
    expect(setNewReplicaSetAnnotations(testDeployment(), rs, 5n, true)).toBe(false);
    expect(setNewReplicaSetAnnotations(testDeployment(), rs, 3n, true)).toBe(false);
  });

  it('copies the Deployment’s own annotations (change-cause) but not its bookkeeping ones', () => {
    const d = testDeployment();
    d.metadata.annotations = {
      'kubernetes.io/change-cause': 'kubectl set image',
      [ANNOTATION.REVISION]: '9',
      'kubectl.kubernetes.io/last-applied-configuration': '{}',
    };
    const rs = testReplicaSet('web', 3);
    expect(copyDeploymentAnnotations(d, rs)).toBe(true);
    expect(rs.metadata.annotations).toEqual({ 'kubernetes.io/change-cause': 'kubectl set image' });
    expect(copyDeploymentAnnotations(d, rs)).toBe(false);
  });
});
