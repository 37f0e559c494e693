import { describe, expect, it } from 'vitest';
import { copyDeploymentAnnotations, maxRevision, setNewReplicaSetAnnotations } from './annotations.js';
import { ANNOTATION } from './names.js';
import { testDeployment, testReplicaSet } from './test-objects.js';

describe('revision annotations', () => {
  it('finds the highest revision among ReplicaSets', () => {
    expect(maxRevision([testReplicaSet('a', 0, { revision: 2 }), testReplicaSet('b', 0, { revision: 7 }), testReplicaSet('c', 0)])).toBe(7);
    expect(maxRevision([])).toBe(0);
  });

  it('gives a new ReplicaSet the next revision and the replica annotations', () => {
    const d = testDeployment({ replicas: 4 });
    const rs = testReplicaSet('web-new', 0);
    expect(setNewReplicaSetAnnotations(d, rs, 3, false)).toBe(true);
    expect(rs.metadata.annotations).toEqual({
      [ANNOTATION.REVISION]: '3',
      [ANNOTATION.DESIRED_REPLICAS]: '4',
      [ANNOTATION.MAX_REPLICAS]: '5',
    });
  });

  it('on a rollback, raises the revision of the old template and remembers the one it had', () => {
    const d = testDeployment();
    const rs = testReplicaSet('web-v1', 0, { revision: 1, annotations: { [ANNOTATION.REVISION_HISTORY]: '0' } });
    expect(setNewReplicaSetAnnotations(d, rs, 4, true)).toBe(true);
    expect(rs.metadata.annotations?.[ANNOTATION.REVISION]).toBe('4');
    expect(rs.metadata.annotations?.[ANNOTATION.REVISION_HISTORY]).toBe('0,1');
  });

  it('leaves a ReplicaSet that is already the newest revision alone', () => {
    const rs = testReplicaSet('web', 3, { revision: 5 });
    expect(setNewReplicaSetAnnotations(testDeployment(), rs, 5, true)).toBe(false);
    expect(setNewReplicaSetAnnotations(testDeployment(), rs, 3, true)).toBe(false);
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
