import { describe, expect, it } from 'vitest';
import type { Pod } from '@skiff/api';
import type { NodeInfo, SchedulerPlugin } from '@skiff/kernel';
import { addPodToNodeInfo, NodeListSnapshot, removePodFromNodeInfo, schedulePod } from '@skiff/scheduler';
import { createInterPodAffinity } from './inter-pod-affinity.js';
import { cluster, HOSTNAME, node, pod, profileWith, term, weighted, ZONE } from './test-support.js';

/** preScore → score → normalizeScore over `nodes`, as the scheduling cycle runs them. */
function scores(plugin: SchedulerPlugin, incoming: Pod, nodes: NodeInfo[]): Record<string, number> {
  const state = new Map<string, unknown>();
  const status = plugin.preScore!(state, incoming, nodes, new NodeListSnapshot(nodes));
  // Skip: the scheduler leaves the plugin's score out, which is the same as every node scoring 0.
  if (status?.code === 'Skip') return Object.fromEntries(nodes.map((info) => [info.node.metadata.name!, 0]));
  expect(status).toBeNull();
  const byNode = new Map(nodes.map((info) => [info.node.metadata.name!, plugin.score!(state, incoming, info)]));
  plugin.normalizeScore!(state, incoming, byNode);
  return Object.fromEntries(byNode);
}

const four = () => [node('node-1'), node('node-2'), node('node-3'), node('node-4')];

describe("InterPodAffinity score: the pod's preferred terms", () => {
  it('draws a pod toward the zone of the pods it prefers', () => {
    const nodes = cluster(
      [node('a-1', { [ZONE]: 'a' }), node('a-2', { [ZONE]: 'a' }), node('b-1', { [ZONE]: 'b' })],
      [pod('cache', { app: 'cache' }, { nodeName: 'b-1' })],
    );
    const web = pod('web', { app: 'web' }, { preferredAffinity: [weighted(50, term('cache', ZONE))] });
    expect(schedulePod(profileWith(), new Map(), web, nodes, () => 0)).toMatchObject({ nodeName: 'b-1', score: 200 });
  });

  it('adds preferred affinity, subtracts preferred anti-affinity, and scales min..max to 0..100', () => {
    const nodes = cluster(four(), [
      pod('a', { app: 'a' }, { nodeName: 'node-1' }),
      pod('b', { app: 'b' }, { nodeName: 'node-2' }),
      pod('c', { app: 'c' }, { nodeName: 'node-4' }),
    ]);
    const web = pod(
      'web',
      { app: 'web' },
      {
        preferredAffinity: [weighted(10, term('a', HOSTNAME)), weighted(5, term('b', HOSTNAME))],
        preferredAntiAffinity: [weighted(20, term('c', HOSTNAME))],
      },
    );
    // Raw 10, 5, 0, −20: (x + 20) / 30 of 100, truncated.
    expect(scores(createInterPodAffinity(), web, nodes)).toEqual({ 'node-1': 100, 'node-2': 83, 'node-3': 66, 'node-4': 0 });
  });

  it('scores every node 0 when the terms match nothing', () => {
    const web = pod('web', { app: 'web' }, { preferredAffinity: [weighted(10, term('nothing', HOSTNAME))] });
    expect(scores(createInterPodAffinity(), web, cluster(four()))).toEqual({ 'node-1': 0, 'node-2': 0, 'node-3': 0, 'node-4': 0 });
  });

  it('counts every matching pod, by weight, in the domain of its node', () => {
    const nodes = cluster(
      [node('a-1', { [ZONE]: 'a' }), node('b-1', { [ZONE]: 'b' }), node('c-1', { [ZONE]: 'c' })],
      [pod('x-1', { app: 'x' }, { nodeName: 'a-1' }), pod('x-2', { app: 'x' }, { nodeName: 'a-1' }), pod('x-3', { app: 'x' }, { nodeName: 'b-1' })],
    );
    const web = pod('web', { app: 'web' }, { preferredAffinity: [weighted(3, term('x', ZONE))] });
    expect(scores(createInterPodAffinity(), web, nodes)).toEqual({ 'a-1': 100, 'b-1': 50, 'c-1': 0 });
  });
});

describe('InterPodAffinity score across cycles', () => {
  it("follows a node's pods as they change between cycles", () => {
    const nodes = cluster(four(), [pod('a', { app: 'a' }, { nodeName: 'node-1' })]);
    const web = pod('web', { app: 'web' }, { preferredAffinity: [weighted(10, term('a', HOSTNAME))] });
    const plugin = createInterPodAffinity();
    expect(scores(plugin, web, nodes)).toEqual({ 'node-1': 100, 'node-2': 0, 'node-3': 0, 'node-4': 0 });
    addPodToNodeInfo(nodes[2]!, pod('a-2', { app: 'a' }, { nodeName: 'node-3' }));
    addPodToNodeInfo(nodes[2]!, pod('a-3', { app: 'a' }, { nodeName: 'node-3' }));
    expect(scores(plugin, web, nodes)).toEqual({ 'node-1': 50, 'node-2': 0, 'node-3': 100, 'node-4': 0 });
    const fan = pod('fan', { app: 'fan' }, { nodeName: 'node-4', preferredAffinity: [weighted(100, term('web', HOSTNAME))] });
    addPodToNodeInfo(nodes[3]!, fan);
    expect(scores(plugin, web, nodes)).toEqual({ 'node-1': 10, 'node-2': 0, 'node-3': 20, 'node-4': 100 });
    removePodFromNodeInfo(nodes[3]!, fan);
    expect(scores(plugin, web, nodes)).toEqual({ 'node-1': 50, 'node-2': 0, 'node-3': 100, 'node-4': 0 });
  });
});

describe("InterPodAffinity score: placed pods' terms", () => {
  const withNeighbour = () => cluster(four(), [pod('sidecar', { app: 'sidecar' }, { nodeName: 'node-2', affinity: [term('web', HOSTNAME)] })]);

  it("draws a pod to where a placed pod's required affinity selects it (hardPodAffinityWeight, default 1)", () => {
    expect(scores(createInterPodAffinity(), pod('web', { app: 'web' }), withNeighbour())).toEqual({ 'node-1': 0, 'node-2': 100, 'node-3': 0, 'node-4': 0 });
  });

  it("ignores placed pods' required affinity when hardPodAffinityWeight is 0 (args from the profile)", () => {
    const profile = profileWith(createInterPodAffinity(), { pluginConfig: [{ name: 'InterPodAffinity', args: { hardPodAffinityWeight: 0 } }] });
    const configured = profile.score[0]!.plugin;
    expect(scores(configured, pod('web', { app: 'web' }), withNeighbour())).toEqual({ 'node-1': 0, 'node-2': 0, 'node-3': 0, 'node-4': 0 });
    // Package options are the profile's defaults: a profile without args keeps them.
    const fromOptions = profileWith(createInterPodAffinity({ hardPodAffinityWeight: 0, ignorePreferredTermsOfExistingPods: false })).score[0]!.plugin;
    expect(scores(fromOptions, pod('web', { app: 'web' }), withNeighbour())).toEqual({ 'node-1': 0, 'node-2': 0, 'node-3': 0, 'node-4': 0 });
  });

  it('keeps a pod away from a placed pod whose preferred anti-affinity selects it, and near one whose preferred affinity does', () => {
    const nodes = cluster(four(), [
      pod('quiet', { app: 'quiet' }, { nodeName: 'node-1', preferredAntiAffinity: [weighted(40, term('web', HOSTNAME))] }),
      pod('fan', { app: 'fan' }, { nodeName: 'node-3', preferredAffinity: [weighted(40, term('web', HOSTNAME))] }),
    ]);
    expect(scores(createInterPodAffinity(), pod('web', { app: 'web' }), nodes)).toEqual({ 'node-1': 0, 'node-2': 50, 'node-3': 100, 'node-4': 50 });
  });

  it('with ignorePreferredTermsOfExistingPods, scores nothing for a pod without preferred terms but still all terms for one with', () => {
    const lean = createInterPodAffinity().withArgs!({ ignorePreferredTermsOfExistingPods: true });
    expect(scores(lean, pod('web', { app: 'web' }), withNeighbour())).toEqual({ 'node-1': 0, 'node-2': 0, 'node-3': 0, 'node-4': 0 });
    const picky = pod('web', { app: 'web' }, { preferredAffinity: [weighted(1, term('nothing', HOSTNAME))] });
    expect(scores(lean, picky, withNeighbour())).toEqual({ 'node-1': 0, 'node-2': 100, 'node-3': 0, 'node-4': 0 });
  });

  it("matches a placed pod's terms in its own namespace only, unless they say otherwise", () => {
    const elsewhere = pod('web', { app: 'web' }, { namespace: 'other' });
    expect(scores(createInterPodAffinity(), elsewhere, withNeighbour())).toEqual({ 'node-1': 0, 'node-2': 0, 'node-3': 0, 'node-4': 0 });
  });
});

describe('InterPodAffinity registration', () => {
  it("has upstream's name, default weight 2 and cluster events", () => {
    const profile = profileWith();
    expect(profile.score).toMatchObject([{ plugin: { name: 'InterPodAffinity' }, weight: 2 }]);
    expect(profile.filter.map((p) => p.name)).toEqual(['InterPodAffinity']);
    expect(createInterPodAffinity().events).toEqual([
      { resource: 'Pod', actions: ['*'] },
      { resource: 'Node', actions: ['Add', 'UpdateNodeLabel'] },
    ]);
  });

  it('checks args as InterPodAffinityArgs: hardPodAffinityWeight within 0..100, no unknown fields', () => {
    const plugin = createInterPodAffinity();
    expect(() => plugin.withArgs!({ hardPodAffinityWeight: 101 })).toThrow('option "args.hardPodAffinityWeight" must be <= 100 (got 101)');
    expect(() => plugin.withArgs!({ hardPodAfinityWeight: 2 })).toThrow(/unknown option "args.hardPodAfinityWeight"/);
    expect(() => profileWith(plugin, { pluginConfig: [{ name: 'InterPodAffinity', args: { hardPodAffinityWeight: -1 } }] })).toThrow(/InterPodAffinity/);
    expect(plugin.withArgs!({ hardPodAffinityWeight: 100 })).not.toBe(plugin);
  });
});
