import { describe, expect, it } from 'vitest';
import { planDaemonPods, podsByNode } from './manage.js';
import { LONG_AGO, NOW, testDaemonSet, testNode, testPod } from './test-objects.js';

const names = (pods: { metadata: { name?: string } }[]) => pods.map((pod) => pod.metadata.name).sort();

describe('planDaemonPods', () => {
  const nodes = [testNode('n1'), testNode('n2'), testNode('n3')];

  it('creates a pod on every eligible node that has none', () => {
    const pods = [testPod('a', 'n2', 'h1')];
    const plan = planDaemonPods(testDaemonSet(), nodes, podsByNode(pods), 'h1', NOW);
    expect(plan).toEqual({ nodesNeedingPods: ['n1', 'n3'], podsToDelete: [], failedPods: [] });
  });

  it('counts a pod not yet bound as being on the node its affinity names', () => {
    const pods = [testPod('a', 'n1', 'h1', { bound: false })];
    expect(planDaemonPods(testDaemonSet(), nodes, podsByNode(pods), 'h1', NOW).nodesNeedingPods).toEqual(['n2', 'n3']);
  });

  it('deletes pods from nodes that stop matching and from nodes that are gone', () => {
    const ds = testDaemonSet({ template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [], nodeSelector: { role: 'edge' } } } });
    const edge = testNode('n1', { labels: { role: 'edge' } });
    const pods = [
      testPod('keep', 'n1', 'h1'),
      testPod('unlabelled', 'n2', 'h1'),
      testPod('gone', 'n9', 'h1'),
      testPod('leaving', 'n2', 'h1', { deleting: true }),
    ];
    const plan = planDaemonPods(ds, [edge, testNode('n2')], podsByNode(pods), 'h1', NOW);
    expect(plan.nodesNeedingPods).toEqual([]);
    expect(names(plan.podsToDelete)).toEqual(['gone', 'unlabelled']);
  });

  it('keeps only the oldest pod of a node, preferring a bound one', () => {
    const pods = [
      testPod('young', 'n1', 'h1', { created: '2024-01-01T00:05:00Z' }),
      testPod('old-unbound', 'n1', 'h1', { bound: false, created: '2024-01-01T00:00:00Z' }),
      testPod('old', 'n1', 'h1', { created: '2024-01-01T00:01:00Z' }),
    ];
    const plan = planDaemonPods(testDaemonSet(), [testNode('n1')], podsByNode(pods), 'h1', NOW);
    expect(names(plan.podsToDelete)).toEqual(['old-unbound', 'young']);
  });

  it('reports failed pods apart, and a node with only a failed or terminating pod gets no second pod yet', () => {
    const pods = [testPod('failed', 'n1', 'h1', { phase: 'Failed' }), testPod('leaving', 'n2', 'h1', { deleting: true })];
    const plan = planDaemonPods(testDaemonSet(), [testNode('n1'), testNode('n2')], podsByNode(pods), 'h1', NOW);
    expect(plan.failedPods.map(({ nodeName, pod }) => [nodeName, pod.metadata.name])).toEqual([['n1', 'failed']]);
    expect(plan.nodesNeedingPods).toEqual([]);
    expect(plan.podsToDelete).toEqual([]);
  });

  it('with surge, keeps the old pod beside the new one until the new one is available', () => {
    const ds = testDaemonSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } });
    const oldReady = testPod('old', 'n1', 'h1', { readySince: LONG_AGO });
    const waiting = planDaemonPods(ds, [testNode('n1')], podsByNode([oldReady, testPod('new', 'n1', 'h2')]), 'h2', NOW);
    expect(waiting.podsToDelete).toEqual([]);
    const done = planDaemonPods(ds, [testNode('n1')], podsByNode([oldReady, testPod('new', 'n1', 'h2', { readySince: LONG_AGO })]), 'h2', NOW);
    expect(names(done.podsToDelete)).toEqual(['old']);
    const oldNotReady = planDaemonPods(ds, [testNode('n1')], podsByNode([testPod('old', 'n1', 'h1'), testPod('new', 'n1', 'h2')]), 'h2', NOW);
    expect(names(oldNotReady.podsToDelete)).toEqual(['old']);
    const allGone = planDaemonPods(ds, [testNode('n1')], podsByNode([testPod('old', 'n1', 'h1', { deleting: true })]), 'h2', NOW);
    expect(allGone.nodesNeedingPods).toEqual(['n1']);
  });
});
