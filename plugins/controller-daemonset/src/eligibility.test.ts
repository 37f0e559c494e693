import { describe, expect, it } from 'vitest';
import { nodeShouldRunDaemonPod } from './eligibility.js';
import { testDaemonSet, testNode } from './test-objects.js';

const withTemplateSpec = (spec: Record<string, unknown>) =>
  testDaemonSet({ template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'agent' }], ...spec } } });

describe('nodeShouldRunDaemonPod', () => {
  it('runs on a plain node', () => {
    expect(nodeShouldRunDaemonPod(testNode('n1'), testDaemonSet())).toEqual({ shouldRun: true, shouldContinueRunning: true });
  });

  it('follows the node selector and required node affinity', () => {
    const ds = withTemplateSpec({
      nodeSelector: { disk: 'ssd' },
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }] },
        },
      },
    });
    expect(nodeShouldRunDaemonPod(testNode('n1', { labels: { disk: 'ssd', zone: 'a' } }), ds).shouldRun).toBe(true);
    expect(nodeShouldRunDaemonPod(testNode('n2', { labels: { disk: 'ssd', zone: 'c' } }), ds)).toEqual({ shouldRun: false, shouldContinueRunning: false });
    expect(nodeShouldRunDaemonPod(testNode('n3', { labels: { zone: 'a' } }), ds)).toEqual({ shouldRun: false, shouldContinueRunning: false });
  });

  it('honours a fixed nodeName in the template', () => {
    const ds = withTemplateSpec({ nodeName: 'n2' });
    expect(nodeShouldRunDaemonPod(testNode('n1'), ds).shouldRun).toBe(false);
    expect(nodeShouldRunDaemonPod(testNode('n2'), ds).shouldRun).toBe(true);
  });

  it('an untolerated NoSchedule taint stops new pods but lets a running one stay; NoExecute evicts', () => {
    const noSchedule = testNode('n1', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] });
    expect(nodeShouldRunDaemonPod(noSchedule, testDaemonSet())).toEqual({ shouldRun: false, shouldContinueRunning: true });
    const noExecute = testNode('n1', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoExecute' }] });
    expect(nodeShouldRunDaemonPod(noExecute, testDaemonSet())).toEqual({ shouldRun: false, shouldContinueRunning: false });
    const preferNo = testNode('n1', { taints: [{ key: 'dedicated', effect: 'PreferNoSchedule' }] });
    expect(nodeShouldRunDaemonPod(preferNo, testDaemonSet()).shouldRun).toBe(true);
    const tolerating = withTemplateSpec({ tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db' }] });
    expect(nodeShouldRunDaemonPod(noExecute, tolerating).shouldRun).toBe(true);
  });

  it('tolerates the node-condition taints every DaemonSet pod tolerates', () => {
    for (const taint of [
      { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/pid-pressure', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' },
      { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
    ]) {
      expect(nodeShouldRunDaemonPod(testNode('n1', { taints: [taint] }), testDaemonSet()).shouldRun, taint.key).toBe(true);
    }
    const networkDown = testNode('n1', { taints: [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }] });
    expect(nodeShouldRunDaemonPod(networkDown, testDaemonSet()).shouldRun).toBe(false);
    expect(nodeShouldRunDaemonPod(networkDown, withTemplateSpec({ hostNetwork: true })).shouldRun).toBe(true);
    // Not tolerated as NoSchedule: a node that is not ready gets no new daemon pod.
    const notReady = testNode('n1', { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] });
    expect(nodeShouldRunDaemonPod(notReady, testDaemonSet())).toEqual({ shouldRun: false, shouldContinueRunning: true });
  });
});
