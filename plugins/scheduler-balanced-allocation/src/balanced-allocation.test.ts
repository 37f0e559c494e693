import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '@skiff/api';
import type { NodeInfo, SchedulerPlugin } from '@skiff/kernel';
import { buildProfile, createNodeInfo, NodeListSnapshot, PluginRegistry, schedulePod } from '@skiff/scheduler';
import { balancedScore, createBalancedAllocation } from './balanced-allocation.js';
import { checkArgs } from './options.js';

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

function scores(plugin: SchedulerPlugin, incoming: Pod, nodes: NodeInfo[]): Record<string, number> {
  const state = new Map<string, unknown>();
  expect(plugin.preScore!(state, incoming, nodes, new NodeListSnapshot(nodes))).toBeNull();
  return Object.fromEntries(nodes.map((info) => [info.node.metadata.name!, plugin.score!(state, incoming, info)]));
}

const cpuOnly = [
  { cpu: '1000m', memory: 0 },
  { cpu: '2000m', memory: 0 },
];
const cpuAndMemory = [
  { cpu: '1000m', memory: 2000 },
  { cpu: '2000m', memory: 3000 },
];

describe('NodeResourcesBalancedAllocation', () => {
  it('scores (1 − std) × 100 of the requested fractions, the pod counted (upstream’s case)', () => {
    const nodes = [
      createNodeInfo(node('node-1', { cpu: '10', memory: 20000 }), [pod('a', cpuOnly, 'node-1')]),
      createNodeInfo(node('node-2', { cpu: '10', memory: 20000 }), [pod('b', cpuAndMemory, 'node-2')]),
    ];
    // node-1: cpu 6000/10000 = 0.6, memory 5000/20000 = 0.25 → std 0.175 → 82; node-2: 0.6 and 0.5 → 95
    expect(scores(createBalancedAllocation(), pod('p', cpuAndMemory), nodes)).toEqual({ 'node-1': 82, 'node-2': 95 });
  });

  it('caps a fraction at 1 and counts requests as they are (no 100m / 200Mi defaults)', () => {
    const full = createNodeInfo(node('full', { cpu: '4', memory: '8Gi' }), [pod('a', [{ cpu: '4' }], 'full')]);
    // cpu (4000 + 2000) / 4000 → 1, memory 0 → std 0.5 → 50
    expect(scores(createBalancedAllocation(), pod('p', [{ cpu: '2' }]), [full])).toEqual({ full: 50 });
    // a request-less pod on an empty node: both fractions 0 → 100
    expect(scores(createBalancedAllocation(), pod('q'), [createNodeInfo(node('empty', { cpu: '4', memory: '8Gi' }))])).toEqual({ empty: 100 });
  });

  it('uses the population standard deviation for more than two resources; leaves out extended resources the pod does not request', () => {
    expect(balancedScore([0.5])).toBe(100);
    // mean 0.4, deviations 0.2, −0.1, −0.1 → sqrt(0.06 / 3) = 0.1414 → 85
    expect(balancedScore([0.6, 0.3, 0.3])).toBe(85);
    const plugin = createBalancedAllocation({
      resources: [
        { name: 'cpu', weight: 1 },
        { name: 'memory', weight: 1 },
        { name: 'nvidia.com/gpu', weight: 1 },
      ],
    });
    const gpuNode = createNodeInfo(node('gpu', { cpu: '10', memory: 20000, 'nvidia.com/gpu': 8 }));
    // without a gpu request: cpu 0.3, memory 0.25 → std 0.025 → 97
    expect(scores(plugin, pod('p', cpuAndMemory), [gpuNode])).toEqual({ gpu: 97 });
    // with 4 of 8 gpus: 0.3, 0.25, 0.5 → mean 0.35, sqrt((0.0025 + 0.01 + 0.0225) / 3) = 0.108 → 89
    expect(scores(plugin, pod('q', [...cpuAndMemory, { 'nvidia.com/gpu': 4 }]), [gpuNode])).toEqual({ gpu: 89 });
  });

  it('places a pod where it evens the node out', () => {
    const registry = new PluginRegistry();
    registry.register(createBalancedAllocation());
    const profile = buildProfile(registry);
    expect(profile.score).toEqual([{ plugin: expect.objectContaining({ name: 'NodeResourcesBalancedAllocation' }), weight: 1 }]);
    const nodes = [
      // cpu-heavy already: a cpu pod would skew it further
      createNodeInfo(node('cpu-heavy', { cpu: '4', memory: '8Gi' }), [pod('a', [{ cpu: '2', memory: '1Gi' }], 'cpu-heavy')]),
      // memory-heavy: a cpu pod balances it
      createNodeInfo(node('memory-heavy', { cpu: '4', memory: '8Gi' }), [pod('b', [{ cpu: '500m', memory: '4Gi' }], 'memory-heavy')]),
    ];
    expect(schedulePod(profile, new Map(), pod('p', [{ cpu: '1500m', memory: '512Mi' }]), nodes)).toMatchObject({ nodeName: 'memory-heavy' });
  });

  it('takes NodeResourcesBalancedAllocationArgs and refuses what upstream refuses, in its words', () => {
    expect(checkArgs({}).resources).toEqual([
      { name: 'cpu', weight: 1 },
      { name: 'memory', weight: 1 },
    ]);
    expect(checkArgs({ resources: [{ name: 'cpu', weight: 0 }] }).resources).toEqual([{ name: 'cpu', weight: 1 }]);
    expect(() => checkArgs({ resources: [{ name: 'cpu' }, { name: 'cpu', weight: 2 }] })).toThrow(
      'invalid NodeResourcesBalancedAllocationArgs: resources[1].name: Duplicate value: "cpu"; resources[1].weight: Invalid value: 2: must be 1',
    );
    const base = createBalancedAllocation();
    const cpuOnlyCopy = base.withArgs!({ resources: [{ name: 'cpu' }] });
    expect(cpuOnlyCopy).not.toBe(base);
    const info = createNodeInfo(node('n', { cpu: '4', memory: '8Gi' }));
    // with cpu alone the deviation is 0
    expect(scores(cpuOnlyCopy, pod('p', [{ cpu: '3' }]), [info])).toEqual({ n: 100 });
  });
});
