import { describe, expect, it } from 'vitest';
import { templateHash } from '@skiff/controller-manager';
import type { ControllerRevision } from '@skiff/api';
import { applyRevision, equalRevisions, newRevision, nextRevisionNumber, revisionData, revisionsToTruncate, sortRevisions } from './revisions.js';
import { SET_UID, testSet } from './test-objects.js';

const revision = (name: string, number: number, created = '2024-01-01T00:00:00Z'): ControllerRevision => ({
  metadata: { name, creationTimestamp: created },
  revision: number,
});

describe('revisions', () => {
  it('record the template as a replacing strategic merge patch, named <set>-<hash>, owned by the set', () => {
    const set = testSet();
    set.metadata.annotations = { 'kubernetes.io/change-cause': 'first' };
    const cr = newRevision(set, 1, 0);
    const hash = templateHash(revisionData(set), 0);
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(cr).toEqual({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name: `web-${hash}`,
        namespace: 'default',
        labels: { app: 'web', 'controller.kubernetes.io/hash': hash },
        annotations: { 'kubernetes.io/change-cause': 'first' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: SET_UID, controller: true, blockOwnerDeletion: true }],
      },
      data: { spec: { template: { ...set.spec.template, $patch: 'replace' } } },
      revision: 1,
    });
  });

  it('hash alike for equal templates whatever the key order, and differently per template and collision count', () => {
    const a = testSet();
    const b = testSet();
    b.spec.template = { spec: b.spec.template.spec, metadata: b.spec.template.metadata };
    expect(templateHash(revisionData(a), 0)).toBe(templateHash(revisionData(b), 0));
    expect(templateHash(revisionData(a), 1)).not.toBe(templateHash(revisionData(a), 0));
    expect(templateHash(revisionData(testSet({}, 'nginx:1.26')), 0)).not.toBe(templateHash(revisionData(a), 0));
    expect(equalRevisions(newRevision(a, 1, 0), newRevision(b, 2, 3))).toBe(true);
    expect(equalRevisions(newRevision(a, 1, 0), newRevision(testSet({}, 'nginx:1.26'), 1, 0))).toBe(false);
  });

  it('give back the template they recorded', () => {
    const old = newRevision(testSet({}, 'nginx:1.25'), 1, 0);
    const restored = applyRevision(testSet({ replicas: 5 }, 'nginx:1.26'), old);
    expect(restored.spec.template.spec.containers[0]!.image).toBe('nginx:1.25');
    expect(restored.spec.template).not.toHaveProperty('$patch');
    expect(restored.spec.replicas).toBe(5);
  });

  it('sort by number, then age, then name; the next number is one above the highest', () => {
    const sorted = sortRevisions([revision('c', 2), revision('b', 1, '2024-01-02T00:00:00Z'), revision('a', 1, '2024-01-02T00:00:00Z'), revision('z', 1)]);
    expect(sorted.map((r) => r.metadata.name)).toEqual(['z', 'a', 'b', 'c']);
    expect(nextRevisionNumber(sorted)).toBe(3);
    expect(nextRevisionNumber([])).toBe(1);
  });

  it('beyond revisionHistoryLimit, the oldest non-live revisions go', () => {
    const sorted = [1, 2, 3, 4, 5].map((n) => revision(`web-${n}`, n));
    expect(revisionsToTruncate(sorted, new Set(['web-1', 'web-5']), 2).map((r) => r.metadata.name)).toEqual(['web-2']);
    expect(revisionsToTruncate(sorted, new Set(['web-5']), 0).map((r) => r.metadata.name)).toEqual(['web-1', 'web-2', 'web-3', 'web-4']);
    expect(revisionsToTruncate(sorted, new Set(), 10)).toEqual([]);
  });
});
