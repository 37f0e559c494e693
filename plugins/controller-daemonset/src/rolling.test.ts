import type { DaemonSet } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { podsByNode } from './manage.js';
import { planRollingUpdate, rollingLimits } from './rolling.js';
import { LONG_AGO, NOW, testDaemonSet, testNode, testPod } from './test-objects.js';

const nodes = ['n1', 'n2', 'n3', 'n4'].map((name) => testNode(name));
const names = (pods: { metadata: { name?: string } }[]) => pods.map((pod) => pod.metadata.name);
const strategy = (rollingUpdate: NonNullable<NonNullable<DaemonSet['spec']['updateStrategy']>['rollingUpdate']>) =>
  testDaemonSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate } });

describe('rollingLimits', () => {
  it('rounds percentages up for both fields, and makes room for one when both are zero', () => {
    expect(rollingLimits(strategy({ maxUnavailable: '10%', maxSurge: 0 }), 4)).toEqual({ maxSurge: 0, maxUnavailable: 1 });
    expect(rollingLimits(strategy({ maxUnavailable: 0, maxSurge: '30%' }), 4)).toEqual({ maxSurge: 2, maxUnavailable: 0 });
    expect(rollingLimits(strategy({ maxUnavailable: 0, maxSurge: 0 }), 4)).toEqual({ maxSurge: 0, maxUnavailable: 1 });
    expect(rollingLimits(strategy({}), 4)).toEqual({ maxSurge: 0, maxUnavailable: 1 });
    expect(() => rollingLimits(strategy({ maxUnavailable: 'lots' }), 4)).toThrow(
      'spec.updateStrategy.rollingUpdate.maxUnavailable must be an integer or a percentage such as "25%" (got "lots")',
    );
  });
});

describe('planRollingUpdate without surge', () => {
  it('deletes old available pods up to maxUnavailable, in node order', () => {
    const pods = nodes.map((node) => testPod(`old-${node.metadata.name}`, node.metadata.name!, 'h1', { readySince: LONG_AGO }));
    expect(names(planRollingUpdate(strategy({ maxUnavailable: 2 }), nodes, podsByNode(pods), 'h2', NOW).podsToDelete)).toEqual(['old-n1', 'old-n2']);
  });

  it('counts nodes without an available current pod against maxUnavailable', () => {
    const pods = [
      testPod('new-n1', 'n1', 'h2'), // not ready yet: unavailable
      testPod('old-n2', 'n2', 'h1', { readySince: LONG_AGO }),
      testPod('old-n3', 'n3', 'h1', { readySince: LONG_AGO }),
      // n4 has none yet: unavailable
    ];
    expect(planRollingUpdate(strategy({ maxUnavailable: 2 }), nodes, podsByNode(pods), 'h2', NOW).podsToDelete).toEqual([]);
    expect(names(planRollingUpdate(strategy({ maxUnavailable: 3 }), nodes, podsByNode(pods), 'h2', NOW).podsToDelete)).toEqual(['old-n2']);
  });

  it('replaces old pods that are not available anyway, whatever the budget', () => {
    const pods = [testPod('new-n1', 'n1', 'h2'), testPod('broken-n2', 'n2', 'h1'), testPod('old-n3', 'n3', 'h1', { readySince: LONG_AGO })];
    expect(names(planRollingUpdate(strategy({ maxUnavailable: 1 }), nodes.slice(0, 3), podsByNode(pods), 'h2', NOW).podsToDelete)).toEqual(['broken-n2']);
  });

  it('honours minReadySeconds, and the template generation label as well as the hash', () => {
    const ds = { ...strategy({ maxUnavailable: 1 }), spec: { ...strategy({ maxUnavailable: 1 }).spec, minReadySeconds: 60 } };
    const justReady = new Date(NOW - 10_000).toISOString();
    const fresh = testPod('new-n1', 'n1', 'h2', { readySince: justReady });
    const pods = [fresh, testPod('old-n2', 'n2', 'h1', { readySince: LONG_AGO })];
    expect(planRollingUpdate(ds, nodes.slice(0, 2), podsByNode(pods), 'h2', NOW).podsToDelete).toEqual([]);
    const byGeneration = testPod('gen-n1', 'n1', 'other', { readySince: LONG_AGO });
    byGeneration.metadata.labels!['pod-template-generation'] = '1';
    expect(names(planRollingUpdate(strategy({ maxUnavailable: 1 }), nodes.slice(0, 2), podsByNode([byGeneration, pods[1]!]), 'h2', NOW).podsToDelete)).toEqual([
      'old-n2',
    ]);
  });
});

describe('planRollingUpdate with surge', () => {
  it('starts new pods on up to maxSurge nodes and deletes an old pod once its replacement is available', () => {
    const ds = strategy({ maxSurge: 2, maxUnavailable: 0 });
    const pods = [
      testPod('old-n1', 'n1', 'h1', { readySince: LONG_AGO }),
      testPod('new-n1', 'n1', 'h2', { readySince: LONG_AGO }),
      testPod('old-n2', 'n2', 'h1', { readySince: LONG_AGO }),
      testPod('new-n2', 'n2', 'h2'),
      testPod('old-n3', 'n3', 'h1', { readySince: LONG_AGO }),
      testPod('old-n4', 'n4', 'h1', { readySince: LONG_AGO }),
    ];
    const step = planRollingUpdate(ds, nodes, podsByNode(pods), 'h2', NOW);
    expect(names(step.podsToDelete)).toEqual(['old-n1']);
    // n2 is still surging: one more node may start.
    expect(step.nodesToCreate).toEqual(['n3']);
  });

  it('replaces an unavailable old pod without spending surge', () => {
    const ds = strategy({ maxSurge: 1, maxUnavailable: 0 });
    const pods = [testPod('old-n1', 'n1', 'h1'), testPod('old-n2', 'n2', 'h1', { readySince: LONG_AGO })];
    expect(planRollingUpdate(ds, nodes.slice(0, 2), podsByNode(pods), 'h2', NOW).nodesToCreate).toEqual(['n1', 'n2']);
  });
});
