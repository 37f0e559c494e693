import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '@skiff/api';
import type { NodeInfo, SchedulerPlugin } from '@skiff/kernel';
import { buildProfile, createNodeInfo, NodeListSnapshot, PluginRegistry, schedulePod } from '@skiff/scheduler';
import { createResourcesFit } from './fit.js';
import { brokenLinearFunction } from './scoring.js';

function node(name: string, allocatable: Record<string, string | number>): Node {
  return { metadata: { name }, status: { allocatable: { pods: 110, ...allocatable }, conditions: [{ type: 'Ready', status: 'True' }] } };
}

function pod(name: string, containers: Record<string, string | number>[] = [{}], nodeName?: string): Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: {
      containers: containers.map((requests, i) => ({ name: `c${i}`, image: 'nginx', ...(Object.keys(requests).length ? { resources: { requests } } : {}) })),
      ...(nodeName ? { nodeName } : {}),
    },
  };
}

/** Scores every node the way the framework does: preScore once, then score per node. */
function scores(plugin: SchedulerPlugin, incoming: Pod, nodes: NodeInfo[]): Record<string, number> {
  const state = new Map<string, unknown>();
  expect(plugin.preScore!(state, incoming, nodes, new NodeListSnapshot(nodes))).toBeNull();
  return Object.fromEntries(nodes.map((info) => [info.node.metadata.name!, plugin.score!(state, incoming, info)]));
}

const Gi = 1024 ** 3;

describe('NodeResourcesFit score', () => {
  it('LeastAllocated (the default): the free share of each resource, the pod counted, weighted mean rounded down', () => {
    const nodes = [
      createNodeInfo(node('node-1', { cpu: '4', memory: '8Gi' }), [pod('a', [{ cpu: '2', memory: '4Gi' }], 'node-1')]),
      createNodeInfo(node('node-2', { cpu: '3', memory: '8Gi' })),
    ];
    const incoming = pod('p', [{ cpu: '1', memory: '2Gi' }]);
    // node-1: cpu (4000 − 3000) / 4000 → 25, memory (8 − 6) / 8 → 25; node-2: cpu 2000 / 3000 → 66, memory 6 / 8 → 75
    expect(scores(createResourcesFit(), incoming, nodes)).toEqual({ 'node-1': 25, 'node-2': Math.trunc((66 + 75) / 2) });
    const cpuHeavy = createResourcesFit({
      scoringStrategy: {
        type: 'LeastAllocated',
        resources: [
          { name: 'cpu', weight: 3 },
          { name: 'memory', weight: 1 },
        ],
      },
    } as never);
    expect(scores(cpuHeavy, incoming, nodes)['node-2']).toBe(Math.trunc((66 * 3 + 75) / 4));
  });

  it('counts containers without requests as 100m / 200Mi, so request-less pods spread', () => {
    const crowded = createNodeInfo(node('node-1', { cpu: '4', memory: '8Gi' }), [pod('a', [{}], 'node-1'), pod('b', [{}], 'node-1')]);
    const quiet = createNodeInfo(node('node-2', { cpu: '4', memory: '8Gi' }));
    // quiet: cpu (4000 − 100) / 4000 → 97, memory (8Gi − 200Mi) / 8Gi → 97; crowded: 300m → 92, 600Mi → 92
    expect(scores(createResourcesFit(), pod('p'), [crowded, quiet])).toEqual({ 'node-1': 92, 'node-2': 97 });
  });

  it('MostAllocated: the used share, capped at 100', () => {
    const plugin = createResourcesFit({ scoringStrategy: { type: 'MostAllocated' } } as never);
    const nodes = [
      createNodeInfo(node('node-1', { cpu: '4', memory: '8Gi' }), [pod('a', [{ cpu: '2', memory: '4Gi' }], 'node-1')]),
      createNodeInfo(node('node-2', { cpu: '1', memory: '1Gi' }), [pod('b', [{ cpu: '1', memory: '1Gi' }], 'node-2')]),
    ];
    // node-1: cpu 3000 / 4000 → 75, memory 6 / 8 → 75; node-2 overcommitted → 100 each
    expect(scores(plugin, pod('p', [{ cpu: '1', memory: '2Gi' }]), nodes)).toEqual({ 'node-1': 75, 'node-2': 100 });
  });

  it('RequestedToCapacityRatio: utilization through the shape, zero-score resources dropped, the mean rounded', () => {
    const plugin = createResourcesFit({
      scoringStrategy: {
        type: 'RequestedToCapacityRatio',
        requestedToCapacityRatio: {
          shape: [
            { utilization: 0, score: 10 },
            { utilization: 100, score: 0 },
          ],
        },
      },
    } as never);
    const nodes = [createNodeInfo(node('node-1', { cpu: '4000', memory: 10000 })), createNodeInfo(node('node-2', { cpu: '6000', memory: 10000 }))];
    const incoming = pod('p', [
      { cpu: '1000', memory: 2000 },
      { cpu: '2000', memory: 3000 },
    ]);
    // upstream's own case: node-1 cpu 75 % → 25, memory 50 % → 50, (25 + 50) / 2 rounds to 38; node-2 50 / 50
    expect(scores(plugin, incoming, nodes)).toEqual({ 'node-1': 38, 'node-2': 50 });
  });

  it('interpolates the shape with integer division and is flat beyond its ends', () => {
    const shape = brokenLinearFunction([
      { utilization: 10, score: 20 },
      { utilization: 40, score: 90 },
      { utilization: 100, score: 0 },
    ]);
    expect([0, 10, 25, 40, 70, 100, 101].map(shape)).toEqual([20, 20, 55, 90, 45, 0, 0]);
    // (90 − 20) × (11 − 10) / 30 = 2.33 → 2
    expect(shape(11)).toBe(22);
  });

  it('scores an extended resource only for pods that request it', () => {
    const plugin = createResourcesFit({
      scoringStrategy: {
        resources: [
          { name: 'cpu', weight: 1 },
          { name: 'example.com/gpu', weight: 1 },
        ],
      },
    } as never);
    const gpu = createNodeInfo(node('gpu', { cpu: '4', memory: '8Gi', 'example.com/gpu': 4 }));
    // without a gpu request: only cpu counts, (4000 − 1000) / 4000 → 75
    expect(scores(plugin, pod('p', [{ cpu: '1' }]), [gpu])).toEqual({ gpu: 75 });
    // with one: gpu 3 / 4 → 75, cpu 75
    expect(scores(plugin, pod('q', [{ cpu: '1', 'example.com/gpu': 1 }]), [gpu])).toEqual({ gpu: 75 });
    expect(scores(plugin, pod('r', [{ cpu: '1', 'example.com/gpu': 3 }]), [gpu])).toEqual({ gpu: Math.trunc((75 + 25) / 2) });
  });

  it('places a pod by the strategy: LeastAllocated spreads, MostAllocated packs', () => {
    const nodes = () => [
      createNodeInfo(node('busy', { cpu: '4', memory: '8Gi' }), [pod('a', [{ cpu: '3', memory: '6Gi' }], 'busy')]),
      createNodeInfo(node('idle', { cpu: '4', memory: '8Gi' })),
    ];
    const place = (config: Parameters<typeof buildProfile>[1]) => {
      const registry = new PluginRegistry();
      registry.register(createResourcesFit());
      return schedulePod(buildProfile(registry, config), new Map(), pod('p', [{ cpu: '500m', memory: 1 * Gi }]), nodes());
    };
    expect(place({})).toMatchObject({ nodeName: 'idle' });
    const packing = { pluginConfig: [{ name: 'NodeResourcesFit', args: { scoringStrategy: { type: 'MostAllocated' } } }] };
    expect(place(packing)).toMatchObject({ nodeName: 'busy' });
  });

  it('registers weight 1 and the events that may make room', () => {
    const registry = new PluginRegistry();
    registry.register(createResourcesFit());
    expect(buildProfile(registry).score).toEqual([{ plugin: expect.objectContaining({ name: 'NodeResourcesFit' }), weight: 1 }]);
    expect(createResourcesFit().events).toEqual([
      { resource: 'Pod', actions: ['Delete'] },
      { resource: 'Node', actions: ['Add', 'Update'] },
    ]);
  });
});
