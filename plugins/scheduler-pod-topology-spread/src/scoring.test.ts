import { describe, expect, it } from 'vitest';
import type { Pod, TopologySpreadConstraint } from '@skiff/api';
import type { NodeInfo } from '@skiff/kernel';
import { buildProfile, createNodeInfo, PluginRegistry, schedulePod } from '@skiff/scheduler';
import { createPodTopologySpread } from './plugin.js';
import { labelledPod, newState, snapshotOf, withWebPods, zoneNode } from './test-support.js';

const fooSelector = { matchExpressions: [{ key: 'foo', operator: 'Exists' }] };
const soft = (maxSkew: number, topologyKey: string, extra: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint => ({
  maxSkew,
  topologyKey,
  whenUnsatisfiable: 'ScheduleAnyway',
  labelSelector: fooSelector,
  ...extra,
});
const fooPod = (...constraints: TopologySpreadConstraint[]) => labelledPod('p', { foo: '' }, { topologySpreadConstraints: constraints });

/** Nodes labelled with a hostname and, when given, `zone=<zone>`, holding `count` pods labelled foo. */
function host(name: string, count: number, zone?: string): NodeInfo {
  const node = zoneNode(name, undefined, zone ? { labels: { zone } } : {});
  return withWebPods(node, count, { foo: '' });
}

/** preScore over `candidates` (the whole cluster is `all`), then score and normalizeScore: the final scores by node. */
function scores(pod: Pod, candidates: NodeInfo[], all: NodeInfo[] = candidates, plugin = createPodTopologySpread()): Record<string, number> {
  const state = newState();
  const status = plugin.preScore!(state, pod, candidates, snapshotOf(all));
  // Skip (no soft constraint): the scheduler leaves the score out, the same as every node scoring 0.
  if (status?.code === 'Skip') return Object.fromEntries(candidates.map((info) => [info.node.metadata.name!, 0]));
  expect(status).toBeNull();
  const result = new Map(candidates.map((info) => [info.node.metadata.name!, plugin.score!(state, pod, info)]));
  plugin.normalizeScore!(state, pod, result);
  return Object.fromEntries(result);
}

describe('PodTopologySpread score (ScheduleAnyway)', () => {
  it('is registered with weight 2 and the framework name', () => {
    expect(createPodTopologySpread()).toMatchObject({ name: 'PodTopologySpread', defaultWeight: 2 });
  });

  it('gives the most to the node with the fewest matching pods (one constraint on hostname, 2/1/0/3)', () => {
    const nodes = [host('node-a', 2), host('node-b', 1), host('node-c', 0), host('node-d', 3)];
    expect(scores(fooPod(soft(1, 'kubernetes.io/hostname')), nodes)).toEqual({ 'node-a': 20, 'node-b': 60, 'node-c': 100, 'node-d': 0 });
  });

  it('waters down differences by maxSkew - 1 (4/3/2/1, maxSkew 3)', () => {
    const nodes = [host('node-a', 4), host('node-b', 3), host('node-c', 2), host('node-d', 1)];
    expect(scores(fooPod(soft(3, 'kubernetes.io/hostname')), nodes)).toEqual({ 'node-a': 44, 'node-b': 66, 'node-c': 77, 'node-d': 100 });
  });

  it('counts pods on every node of a zone, candidates or not', () => {
    const all = [host('node-a', 4, 'zone1'), host('node-b', 2, 'zone1'), host('node-x', 1, 'zone2'), host('node-y', 3, 'zone2')];
    const candidates = all.slice(0, 3);
    expect(scores(fooPod(soft(1, 'zone')), candidates, all)).toEqual({ 'node-a': 75, 'node-b': 75, 'node-x': 100 });
  });

  it('weighs zone and hostname constraints by their number of domains', () => {
    const all = [host('node-a', 2, 'zone1'), host('node-b', 1, 'zone1'), host('node-x', 2, 'zone2'), host('node-y', 4, 'zone2')];
    const candidates = [all[0]!, all[2]!];
    expect(scores(fooPod(soft(1, 'zone'), soft(1, 'kubernetes.io/hostname')), candidates, all)).toEqual({ 'node-a': 100, 'node-x': 63 });
  });

  it('gives 0 to candidates missing a topology key, and the rest are scored among themselves', () => {
    const all = [host('node-a', 2, 'zone1'), host('node-b', 0, 'zone2'), host('node-c', 0)];
    expect(scores(fooPod(soft(1, 'zone')), all)).toEqual({ 'node-a': 0, 'node-b': 100, 'node-c': 0 });
  });

  it('an empty selector matches no existing pod: every node scores the same', () => {
    const nodes = [host('node-a', 2), host('node-b', 0)];
    expect(scores(fooPod(soft(1, 'kubernetes.io/hostname', { labelSelector: {} })), nodes)).toEqual({ 'node-a': 100, 'node-b': 100 });
  });

  it('does not score pods without ScheduleAnyway constraints (all 0, nothing added to the total)', () => {
    const nodes = [host('node-a', 2), host('node-b', 0)];
    expect(scores(labelledPod('p', { foo: '' }), nodes)).toEqual({ 'node-a': 0, 'node-b': 0 });
    const hard = { ...soft(1, 'kubernetes.io/hostname'), whenUnsatisfiable: 'DoNotSchedule' };
    expect(scores(fooPod(hard), nodes)).toEqual({ 'node-a': 0, 'node-b': 0 });
  });

  it('nodeTaintsPolicy Honor leaves untolerated tainted nodes out of the zone counts', () => {
    const tainted = withWebPods(zoneNode('node-y', undefined, { labels: { zone: 'zone2' }, taints: [{ key: 'k', effect: 'NoSchedule' }] }), 5, { foo: '' });
    const all = [host('node-a', 2, 'zone1'), host('node-x', 0, 'zone2'), tainted];
    const candidates = all.slice(0, 2);
    expect(scores(fooPod(soft(1, 'zone')), candidates, all)).toEqual({ 'node-a': 100, 'node-x': 42 });
    expect(scores(fooPod(soft(1, 'zone', { nodeTaintsPolicy: 'Honor' })), candidates, all)).toEqual({ 'node-a': 0, 'node-x': 100 });
  });

  it('matchLabelKeys narrows the counted pods to those sharing the values', () => {
    const nodes = [withWebPods(zoneNode('node-a', 'a'), 3, { foo: '', rev: 'old' }), withWebPods(zoneNode('node-b', 'b'), 1, { foo: '', rev: 'new' })];
    const pod = (matchLabelKeys?: string[]) =>
      labelledPod('p', { foo: '', rev: 'new' }, { topologySpreadConstraints: [soft(1, 'kubernetes.io/hostname', matchLabelKeys ? { matchLabelKeys } : {})] });
    // Raw scores round(3 × ln 4) + 0 = 4 and round(1 × ln 4) = 1, reversed: 100 × (4 + 1 − raw) / 4.
    expect(scores(pod(), nodes)).toMatchObject({ 'node-a': 25, 'node-b': 100 });
    expect(scores(pod(['rev']), nodes)).toMatchObject({ 'node-a': 100, 'node-b': 0 });
  });

  it('steers schedulePod to the emptier zone', () => {
    const registry = new PluginRegistry();
    registry.register(createPodTopologySpread());
    const nodes = [host('node-a', 3, 'zone1'), host('node-b', 1, 'zone1'), host('node-x', 1, 'zone2')];
    for (let i = 0; i < 5; i++) {
      expect(schedulePod(buildProfile(registry), newState(), fooPod(soft(1, 'zone')), nodes, Math.random)).toMatchObject({ nodeName: 'node-x' });
    }
    expect(schedulePod(buildProfile(registry), newState(), fooPod(soft(1, 'zone')), [createNodeInfo(zoneNode('solo', 'z'))])).toMatchObject({
      nodeName: 'solo',
    });
  });
});
