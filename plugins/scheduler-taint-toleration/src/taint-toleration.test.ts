import { describe, expect, it } from 'vitest';
import type { Node, Pod, Taint, Toleration } from '@skiff/api';
import { buildProfile, createNodeInfo, PluginRegistry, schedulePod } from '@skiff/scheduler';
import { createTaintToleration } from './taint-toleration.js';

const node = (name: string, taints: Taint[] = []): Node => ({
  metadata: { name },
  spec: { taints },
  status: { allocatable: { cpu: '4', memory: '8Gi', pods: 110 }, conditions: [{ type: 'Ready', status: 'True' }] },
});
const pod = (tolerations?: Toleration[]): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'uid-p' },
  spec: { containers: [{ name: 'c', image: 'app' }], tolerations },
});

describe('TaintToleration filter', () => {
  const plugin = createTaintToleration();
  const filter = (p: Pod, taints: Taint[]) => plugin.filter!(new Map(), p, createNodeInfo(node('n', taints)));

  it('rejects the first NoSchedule / NoExecute taint not tolerated, in kube-scheduler words', () => {
    expect(filter(pod(), [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }])).toEqual({
      code: 'UnschedulableAndUnresolvable',
      reasons: ['node(s) had untolerated taint {dedicated: gpu}'],
    });
    expect(filter(pod(), [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }])).toEqual({
      code: 'UnschedulableAndUnresolvable',
      reasons: ['node(s) had untolerated taint {node.kubernetes.io/not-ready: }'],
    });
    const taints: Taint[] = [
      { key: 'a', value: '1', effect: 'NoSchedule' },
      { key: 'b', value: '2', effect: 'NoSchedule' },
    ];
    expect(filter(pod([{ key: 'a', value: '1' }]), taints)?.reasons).toEqual(['node(s) had untolerated taint {b: 2}']);
  });

  it('ignores PreferNoSchedule taints and passes tolerated ones', () => {
    expect(filter(pod(), [{ key: 'soft', effect: 'PreferNoSchedule' }])).toBeNull();
    expect(
      filter(pod([{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }]), [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]),
    ).toBeNull();
    expect(filter(pod([{ key: 'dedicated', operator: 'Exists' }]), [{ key: 'dedicated', value: 'x', effect: 'NoExecute' }])).toBeNull();
    expect(filter(pod([{ key: 'dedicated', value: 'cpu' }]), [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }])).not.toBeNull();
    expect(filter(pod([{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }]), [{ key: 'dedicated', effect: 'NoSchedule' }])).not.toBeNull();
  });
});

describe('TaintToleration score', () => {
  /** Scores after normalizing, as the scheduler would run preScore, score and normalizeScore. */
  function scores(p: Pod, nodes: Node[]): Record<string, number> {
    const plugin = createTaintToleration();
    const state = new Map<string, unknown>();
    const infos = nodes.map((n) => createNodeInfo(n));
    expect(plugin.preScore!(state, p, infos, undefined as never)).toBeNull();
    const raw = new Map(infos.map((info) => [info.node.metadata.name!, plugin.score!(state, p, info)]));
    plugin.normalizeScore!(state, p, raw);
    return Object.fromEntries(raw);
  }

  it('ranks nodes by untolerated PreferNoSchedule taints, fewest highest', () => {
    const soft = (key: string): Taint => ({ key, value: 'x', effect: 'PreferNoSchedule' });
    const nodes = [node('none'), node('one', [soft('a')]), node('two', [soft('a'), soft('b')]), node('hard', [{ key: 'c', effect: 'NoSchedule' }])];
    expect(scores(pod(), nodes)).toEqual({ none: 100, one: 50, two: 0, hard: 100 });
    // A toleration without an effect tolerates a PreferNoSchedule taint; one for NoSchedule does not.
    expect(scores(pod([{ key: 'a', operator: 'Exists' }]), nodes)).toEqual({ none: 100, one: 100, two: 0, hard: 100 });
    expect(scores(pod([{ key: 'a', operator: 'Exists', effect: 'NoSchedule' }]), nodes)).toEqual({ none: 100, one: 50, two: 0, hard: 100 });
    expect(scores(pod([{ operator: 'Exists', effect: 'PreferNoSchedule' }]), nodes)).toEqual({ none: 100, one: 100, two: 100, hard: 100 });
  });

  it("has upstream's weight and events", () => {
    const plugin = createTaintToleration();
    expect(plugin.defaultWeight).toBe(3);
    expect(plugin.events).toEqual([{ resource: 'Node', actions: ['Add', 'Update'] }]);
  });
});

describe('TaintToleration in a scheduling cycle', () => {
  it('keeps a pod off tainted nodes, prefers the node without a soft taint, and words the failure as kube-scheduler', () => {
    const registry = new PluginRegistry();
    registry.register(createTaintToleration());
    const profile = buildProfile(registry);
    expect(profile.score).toEqual([{ plugin: expect.objectContaining({ name: 'TaintToleration' }), weight: 3 }]);
    const nodes = [
      node('gpu', [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]),
      node('spot', [{ key: 'spot', value: 'true', effect: 'PreferNoSchedule' }]),
      node('plain'),
    ].map((n) => createNodeInfo(n));
    expect(schedulePod(profile, new Map(), pod(), nodes)).toMatchObject({ nodeName: 'plain' });
    expect(schedulePod(profile, new Map(), pod(), nodes.slice(0, 2))).toMatchObject({ nodeName: 'spot' });
    const tainted = [
      node('gpu-1', [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]),
      node('gpu-2', [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]),
      node('down', [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }]),
    ].map((n) => createNodeInfo(n));
    expect(schedulePod(profile, new Map(), pod(), tainted)).toMatchObject({
      code: 'UnschedulableAndUnresolvable',
      message: '0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 2 node(s) had untolerated taint {dedicated: gpu}.',
    });
    expect(schedulePod(profile, new Map(), pod([{ key: 'dedicated', operator: 'Exists' }]), tainted.slice(0, 2))).toMatchObject({
      nodeName: expect.stringMatching(/^gpu-/),
    });
  });
});
