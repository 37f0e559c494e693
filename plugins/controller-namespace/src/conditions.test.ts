import { describe, expect, it } from 'vitest';
import { deletionConditions, mergeConditions } from './conditions.js';
import type { ContentReport } from './content.js';

const empty = (): ContentReport => ({ remaining: new Map(), finalizers: new Map(), failures: [] });

describe('deletionConditions', () => {
  it('names what remains in Kubernetes message shapes, sorted', () => {
    const report: ContentReport = {
      remaining: new Map([
        ['pods.', 2],
        ['deployments.apps', 1],
      ]),
      finalizers: new Map([['example.com/hold', 2]]),
      failures: ['widgets.example.com: boom'],
    };
    expect(deletionConditions(report, '2024-01-01T00:00:00Z')).toEqual([
      {
        type: 'NamespaceDeletionContentFailure',
        status: 'True',
        reason: 'ContentDeletionFailed',
        message: 'Failed to delete all resource types, 1 remaining: widgets.example.com: boom',
        lastTransitionTime: '2024-01-01T00:00:00Z',
      },
      {
        type: 'NamespaceContentRemaining',
        status: 'True',
        reason: 'SomeResourcesRemain',
        message: 'Some resources are remaining: deployments.apps has 1 resource instances, pods. has 2 resource instances',
        lastTransitionTime: '2024-01-01T00:00:00Z',
      },
      {
        type: 'NamespaceFinalizersRemaining',
        status: 'True',
        reason: 'SomeFinalizersRemain',
        message: 'Some content in the namespace has finalizers remaining: example.com/hold in 2 resource instances',
        lastTransitionTime: '2024-01-01T00:00:00Z',
      },
    ]);
  });

  it('reports an emptied namespace with the okay reasons', () => {
    expect(deletionConditions(empty(), 't').map(({ status, reason }) => `${status} ${reason}`)).toEqual([
      'False ContentDeleted',
      'False ContentRemoved',
      'False ContentHasNoFinalizers',
    ]);
  });
});

describe('mergeConditions', () => {
  it('adds new conditions and keeps unrelated ones', () => {
    const other = { type: 'Custom', status: 'True' };
    const { conditions, changed } = mergeConditions([other], deletionConditions(empty(), 't1'));
    expect(changed).toBe(true);
    expect(conditions[0]).toBe(other);
    expect(conditions).toHaveLength(4);
  });

  it('reports no change when only the time would differ', () => {
    const { conditions } = mergeConditions([], deletionConditions(empty(), 't1'));
    expect(mergeConditions(conditions, deletionConditions(empty(), 't2'))).toEqual({ conditions, changed: false });
  });

  it('keeps lastTransitionTime while the status stays, and moves it when the status flips', () => {
    const first = empty();
    first.remaining.set('pods.', 2);
    const { conditions } = mergeConditions([], deletionConditions(first, 't1'));

    const fewer = empty();
    fewer.remaining.set('pods.', 1);
    const sameStatus = mergeConditions(conditions, deletionConditions(fewer, 't2'));
    expect(sameStatus.changed).toBe(true);
    expect(sameStatus.conditions[1]).toMatchObject({
      status: 'True',
      message: 'Some resources are remaining: pods. has 1 resource instances',
      lastTransitionTime: 't1',
    });

    const flipped = mergeConditions(sameStatus.conditions, deletionConditions(empty(), 't3'));
    expect(flipped.conditions[1]).toMatchObject({ status: 'False', reason: 'ContentRemoved', lastTransitionTime: 't3' });
  });
});
