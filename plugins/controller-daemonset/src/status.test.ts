import { describe, expect, it } from 'vitest';
import { podsByNode } from './manage.js';
import { calculateStatus, statusChanged } from './status.js';
import { LONG_AGO, NOW, testDaemonSet, testNode, testPod } from './test-objects.js';

describe('calculateStatus', () => {
  it('counts desired, current, misscheduled, ready, available, updated and unavailable node by node', () => {
    const ds = testDaemonSet({ template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [], nodeSelector: { run: 'yes' } } } }, 3);
    ds.status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0, observedGeneration: 2, collisionCount: 1 };
    const run = { labels: { run: 'yes' } };
    const nodes = [testNode('n1', run), testNode('n2', run), testNode('n3', run), testNode('n4', run), testNode('n5')];
    const pods = [
      testPod('n1-new-ready', 'n1', 'h2', { readySince: LONG_AGO }),
      testPod('n2-old-ready', 'n2', 'h1', { readySince: LONG_AGO }),
      testPod('n3-new-unready', 'n3', 'h2'),
      testPod('n5-stray', 'n5', 'h2', { readySince: LONG_AGO }),
    ];
    const status = calculateStatus(ds, nodes, podsByNode(pods), 'h2', NOW, true);
    expect(status).toEqual({
      desiredNumberScheduled: 4,
      currentNumberScheduled: 3,
      numberMisscheduled: 1,
      numberReady: 2,
      numberAvailable: 2,
      numberUnavailable: 2,
      updatedNumberScheduled: 2,
      observedGeneration: 3,
      collisionCount: 1,
    });
    expect(calculateStatus(ds, nodes, podsByNode(pods), 'h2', NOW, false).observedGeneration).toBe(2);
    expect(statusChanged(ds, status)).toBe(true);
    expect(statusChanged({ ...ds, status }, status)).toBe(false);
  });

  it('judges a node by its oldest bound pod', () => {
    const pods = [testPod('b-new', 'n1', 'h2', { created: '2024-01-01T00:09:00Z' }), testPod('a-old', 'n1', 'h1', { readySince: LONG_AGO })];
    const status = calculateStatus(testDaemonSet(), [testNode('n1')], podsByNode(pods), 'h2', NOW, true);
    expect(status).toMatchObject({ currentNumberScheduled: 1, numberReady: 1, updatedNumberScheduled: 0 });
  });
});
