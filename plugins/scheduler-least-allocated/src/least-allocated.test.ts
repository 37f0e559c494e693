import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '@skiff/api';
import { buildProfile, createNodeInfo, NodeListSnapshot, PluginRegistry, schedulePod } from '@skiff/scheduler';
import { createLeastAllocated, leastAllocatedScore, DEFAULT_RESOURCES } from './least-allocated.js';

const Gi = 1024 ** 3;

function node(name: string, cpu = '4', memory = '8Gi'): Node {
  return { metadata: { name }, status: { allocatable: { cpu, memory, pods: 110 }, conditions: [{ type: 'Ready', status: 'True' }] } };
}

function pod(name: string, requests?: Record<string, string>, nodeName?: string): Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { containers: [{ name: 'main', image: 'nginx', ...(requests ? { resources: { requests } } : {}) }], ...(nodeName ? { nodeName } : {}) },
  };
}

describe('NodeResourcesLeastAllocated', () => {
  it('scores the free share of cpu and memory, counting the pod itself', () => {
    const empty = createNodeInfo(node('n'));
    // cpu: (4000 - 1000) / 4000 = 75; memory: (8Gi - 2Gi) / 8Gi = 75
    expect(leastAllocatedScore({ milliCPU: 1000, memory: 2 * Gi, pods: 1 }, empty, DEFAULT_RESOURCES)).toBe(75);
    const half = createNodeInfo(node('n'), [pod('a', { cpu: '2', memory: '4Gi' }, 'n')]);
    // cpu: (4000 - 3000) / 4000 = 25; memory: (8 - 6) / 8 = 25
    expect(leastAllocatedScore({ milliCPU: 1000, memory: 2 * Gi, pods: 1 }, half, DEFAULT_RESOURCES)).toBe(25);
  });

  it('weights resources as configured and rounds down like Kubernetes', () => {
    const info = createNodeInfo(node('n', '3', '8Gi'));
    const request = { milliCPU: 1000, memory: 0, pods: 1 };
    // cpu: floor(2000 * 100 / 3000) = 66; memory 100
    expect(leastAllocatedScore(request, info, [{ name: 'cpu', weight: 1 }])).toBe(66);
    expect(
      leastAllocatedScore(request, info, [
        { name: 'cpu', weight: 3 },
        { name: 'memory', weight: 1 },
      ]),
    ).toBe(Math.floor((66 * 3 + 100) / 4));
  });

  it('gives an overcommitted resource zero, and leaves out resources the node lacks', () => {
    const info = createNodeInfo(node('n', '1', '1Gi'));
    expect(
      leastAllocatedScore({ milliCPU: 2000, memory: 0, pods: 1 }, info, [
        { name: 'cpu', weight: 1 },
        { name: 'memory', weight: 1 },
      ]),
    ).toBe(50);
    expect(leastAllocatedScore({ milliCPU: 0, memory: 0, pods: 1 }, info, [{ name: 'example.com/gpu', weight: 1 }])).toBe(0);
  });

  it('counts request-less pods as 100m / 200Mi, so they spread too', () => {
    const plugin = createLeastAllocated();
    const crowded = createNodeInfo(node('node-1'), [pod('a', undefined, 'node-1'), pod('b', undefined, 'node-1')]);
    const quiet = createNodeInfo(node('node-2'));
    const state = new Map<string, unknown>();
    plugin.preScore!(state, pod('p'), [crowded, quiet], new NodeListSnapshot([crowded, quiet]));
    expect(plugin.score!(state, pod('p'), crowded)).toBeLessThan(plugin.score!(state, pod('p'), quiet));
    // quiet: cpu (4000 - 100) / 4000 → 97, memory (8Gi - 200Mi) / 8Gi → 97
    expect(plugin.score!(state, pod('p'), quiet)).toBe(97);
  });

  it('sends each pod to the emptiest node', () => {
    const registry = new PluginRegistry();
    registry.register(createLeastAllocated());
    const profile = buildProfile(registry);
    const nodes = [
      createNodeInfo(node('node-1'), [pod('a', { cpu: '3' }, 'node-1')]),
      createNodeInfo(node('node-2'), [pod('b', { cpu: '1' }, 'node-2')]),
      createNodeInfo(node('node-3'), [pod('c', { cpu: '2' }, 'node-3')]),
    ];
    expect(schedulePod(profile, new Map(), pod('p', { cpu: '500m', memory: '1Gi' }), nodes)).toMatchObject({ nodeName: 'node-2' });
  });

  it('offers its weight as the profile default', () => {
    const registry = new PluginRegistry();
    registry.register(createLeastAllocated({ resources: [...DEFAULT_RESOURCES], weight: 4 }));
    expect(buildProfile(registry).score[0]!.weight).toBe(4);
  });
});
